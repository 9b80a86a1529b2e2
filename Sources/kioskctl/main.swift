import KioskctlCommands

await KioskctlProgram.main()
