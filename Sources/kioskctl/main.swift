import KioskCore
print(KioskAPI.busName)
