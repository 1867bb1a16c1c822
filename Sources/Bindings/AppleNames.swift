import MoonreelEngine

/// Apple's spellings of the names scripts pass as strings, so Swift and Objective-C code
/// ported line by line works as written: `kCAGravityResizeAspectFill` and Swift's
/// `.resizeAspectFill` mean `"resizeAspectFill"`, `AVAssetExportPresetHighestQuality` means
/// `"HighestQuality"`, `AVFileTypeQuickTimeMovie` means `"mov"`, `redColor` is UIColor's red.
/// docs/porting-from-ios.md lists every name.
enum AppleNames {
    /// Prefixes of Core Animation's constant names, in the order they are tried (longest
    /// first where one is the start of another).
    static let constantPrefixes = ["kCAMediaTimingFunction", "kCAAnimation", "kCAAlignment", "kCAGravity",
                                   "kCAFillMode", "kCATruncation", "kCATransition"]

    /// The plain name for an Apple spelling of an enumeration value, or the name itself:
    /// "kCAGravityResizeAspectFill" and ".resizeAspectFill" → "resizeAspectFill".
    static func enumerationValue(_ name: String) -> String {
        if name.hasPrefix("."), name.count > 1 { return String(name.dropFirst()) }
        for prefix in constantPrefixes where name.hasPrefix(prefix) && name.count > prefix.count {
            let rest = name.dropFirst(prefix.count)
            return rest.prefix(1).lowercased() + rest.dropFirst()
        }
        return name
    }

    /// "AVAssetExportPresetHighestQuality" → "HighestQuality".
    static func presetName(_ name: String) -> String {
        let prefix = "AVAssetExportPreset"
        return name.hasPrefix(prefix) && name.count > prefix.count ? String(name.dropFirst(prefix.count)) : name
    }

    /// File types: AVFileType constants, their UTIs and Swift's `.mov` style.
    static let fileTypes: [String: String] = [
        "AVFileTypeQuickTimeMovie": "mov", "com.apple.quicktime-movie": "mov", ".mov": "mov", "quickTimeMovie": "mov",
        "AVFileTypeMPEG4": "mp4", "public.mpeg-4": "mp4", ".mp4": "mp4", "mpeg4": "mp4",
        "AVFileTypeAppleM4V": "m4v", "com.apple.m4v-video": "m4v", ".m4v": "m4v", "appleM4V": "m4v",
        "AVFileTypeAppleM4A": "m4a", "com.apple.m4a-audio": "m4a", ".m4a": "m4a", "appleM4A": "m4a",
        "AVFileTypeJPEG": "jpg", "public.jpeg": "jpg", ".jpg": "jpg", "jpeg": "jpg",
        "com.compuserve.gif": "gif", ".gif": "gif", "org.webmproject.webm": "webm", ".webm": "webm",
        "org.matroska.mkv": "mkv", ".mkv": "mkv", "public.png": "png", ".png": "png",
    ]

    static func fileType(_ name: String) -> String { fileTypes[name] ?? name }

    /// Media types: AVMediaType constants (and their four-character values) and Swift's `.video`.
    static let mediaTypes: [String: String] = [
        "AVMediaTypeVideo": "video", "vide": "video", ".video": "video",
        "AVMediaTypeAudio": "audio", "soun": "audio", ".audio": "audio",
        "AVMediaTypeSubtitle": "subtitle", "sbtl": "subtitle", ".subtitle": "subtitle",
        "AVMediaTypeText": "text", ".text": "text",
    ]

    static func mediaType(_ name: String) -> String { mediaTypes[name] ?? name }

    /// UIColor's named colours (`redColor`, Swift's `.red`) and the iOS system colours
    /// (`systemRed`), in their light-mode sRGB values. UIColor's green is full green, unlike
    /// CSS's "green", so the plain CSS names keep their CSS meaning.
    static let colors: [String: Color] = {
        func rgb(_ r: Double, _ g: Double, _ b: Double) -> Color { Color(red: r, green: g, blue: b) }
        func hex(_ value: UInt32) -> Color {
            rgb(Double(value >> 16 & 0xFF) / 255, Double(value >> 8 & 0xFF) / 255, Double(value & 0xFF) / 255)
        }
        let classic: [String: Color] = [
            "black": rgb(0, 0, 0), "darkGray": rgb(1.0 / 3, 1.0 / 3, 1.0 / 3), "lightGray": rgb(2.0 / 3, 2.0 / 3, 2.0 / 3),
            "white": rgb(1, 1, 1), "gray": rgb(0.5, 0.5, 0.5), "red": rgb(1, 0, 0), "green": rgb(0, 1, 0),
            "blue": rgb(0, 0, 1), "cyan": rgb(0, 1, 1), "yellow": rgb(1, 1, 0), "magenta": rgb(1, 0, 1),
            "orange": rgb(1, 0.5, 0), "purple": rgb(0.5, 0, 0.5), "brown": rgb(0.6, 0.4, 0.2), "clear": .clear,
        ]
        let system: [String: UInt32] = [
            "systemRed": 0xFF3B30, "systemOrange": 0xFF9500, "systemYellow": 0xFFCC00, "systemGreen": 0x34C759,
            "systemMint": 0x00C7BE, "systemTeal": 0x30B0C7, "systemCyan": 0x32ADE6, "systemBlue": 0x007AFF,
            "systemIndigo": 0x5856D6, "systemPurple": 0xAF52DE, "systemPink": 0xFF2D55, "systemBrown": 0xA2845E,
            "systemGray": 0x8E8E93,
        ]
        var all: [String: Color] = [:]
        for (name, color) in classic {
            all[name + "Color"] = color
            all["." + name] = color
        }
        for (name, value) in system {
            all[name] = hex(value)
            all["." + name] = hex(value)
        }
        return all
    }()
}
