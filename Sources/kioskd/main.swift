import KioskdCommand

KioskdProgram.main()
