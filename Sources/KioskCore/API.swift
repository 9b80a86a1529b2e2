public enum KioskAPI { public static let busName = "org.kioskd.GuidedAccess1" }
