import Testing
@testable import KioskCore
@Test func busName() { #expect(KioskAPI.busName == "org.kioskd.GuidedAccess1") }
