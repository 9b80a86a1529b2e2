import KioskBridge

await BridgeProgram.main()
