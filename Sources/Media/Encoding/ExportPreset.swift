/// What an export preset means: codec, size rule and quality. Sizes are boxes the render
/// size is fitted into (aspect kept, turned to match portrait pictures, never scaled up,
/// even numbers for 4:2:0).
public struct ExportPreset: Sendable, Hashable {
    /// The video codec a preset encodes with.
    public enum Video: String, Sendable, Hashable {
        /// H.264 (libx264).
        case h264
        /// HEVC, H.265 (libx265).
        case hevc
    }
    /// AVFoundation's preset name without its prefix: "HighestQuality" for
    /// `AVAssetExportPresetHighestQuality`, "1920x1080", "AppleM4A", "Passthrough"; also
    /// "SmartCut", Moonreel's own.
    public let name: String
    /// nil: audio only (AppleM4A) or packet copy (Passthrough).
    public let video: Video?
    /// Whether the preset copies packets as they are (`Passthrough`): no re-encoding, no video
    /// composition, audio mix or settings.
    public let isPassthrough: Bool
    /// Copies whole GOPs and re-encodes only around the cuts (H.264; else re-encodes all).
    public let isSmartCut: Bool
    /// The box, in pixels, the render size is fitted into (turned for portrait pictures); nil:
    /// the render size as it is.
    public let boundingBox: Size?
    /// x264/x265 constant rate factor and speed preset.
    public let crf: Int
    /// x264/x265's speed preset ("veryfast", "medium"…); empty when nothing is encoded.
    public let speed: String
    /// The audio bit rate in bits per second, unless the session's `audioSettings` set one (0 for Passthrough).
    public let audioBitRate: Int

    /// Every preset, as `AVAssetExportSession.allExportPresets()` lists them.
    public static let all: [ExportPreset] = [
        ExportPreset(name: "Passthrough", video: nil, isPassthrough: true, boundingBox: nil, crf: 0, speed: "", audioBitRate: 0),
        ExportPreset(name: "SmartCut", video: .h264, isSmartCut: true, boundingBox: nil, crf: 17, speed: "veryfast", audioBitRate: 192_000),
        ExportPreset(name: "LowQuality", video: .h264, boundingBox: Size(width: 480, height: 360), crf: 28, speed: "veryfast", audioBitRate: 64_000),
        ExportPreset(name: "MediumQuality", video: .h264, boundingBox: Size(width: 960, height: 540), crf: 23, speed: "fast", audioBitRate: 128_000),
        ExportPreset(name: "HighestQuality", video: .h264, boundingBox: nil, crf: 18, speed: "medium", audioBitRate: 192_000),
        ExportPreset(name: "640x480", video: .h264, boundingBox: Size(width: 640, height: 480), crf: 20, speed: "medium", audioBitRate: 160_000),
        ExportPreset(name: "960x540", video: .h264, boundingBox: Size(width: 960, height: 540), crf: 20, speed: "medium", audioBitRate: 160_000),
        ExportPreset(name: "1280x720", video: .h264, boundingBox: Size(width: 1280, height: 720), crf: 20, speed: "medium", audioBitRate: 160_000),
        ExportPreset(name: "1920x1080", video: .h264, boundingBox: Size(width: 1920, height: 1080), crf: 20, speed: "medium", audioBitRate: 192_000),
        ExportPreset(name: "3840x2160", video: .h264, boundingBox: Size(width: 3840, height: 2160), crf: 20, speed: "medium", audioBitRate: 192_000),
        ExportPreset(name: "HEVCHighestQuality", video: .hevc, boundingBox: nil, crf: 20, speed: "medium", audioBitRate: 192_000),
        ExportPreset(name: "HEVC1920x1080", video: .hevc, boundingBox: Size(width: 1920, height: 1080), crf: 22, speed: "medium", audioBitRate: 192_000),
        ExportPreset(name: "HEVC3840x2160", video: .hevc, boundingBox: Size(width: 3840, height: 2160), crf: 22, speed: "medium", audioBitRate: 192_000),
        ExportPreset(name: "AppleM4A", video: nil, boundingBox: nil, crf: 0, speed: "", audioBitRate: 256_000),
    ]

    init(name: String, video: Video?, isPassthrough: Bool = false, isSmartCut: Bool = false, boundingBox: Size?, crf: Int, speed: String, audioBitRate: Int) {
        self.name = name
        self.video = video
        self.isPassthrough = isPassthrough
        self.isSmartCut = isSmartCut
        self.boundingBox = boundingBox
        self.crf = crf
        self.speed = speed
        self.audioBitRate = audioBitRate
    }

    /// The preset called `name` ("HighestQuality"…), or nil for an unknown name.
    public static func named(_ name: String) -> ExportPreset? { all.first { $0.name == name } }
    /// The names of `all`, in order.
    public static var names: [String] { all.map(\.name) }

    /// The encoded size for a render size: fitted into the box, never larger than the
    /// render size, and rounded down to `sides`: even numbers for 4:2:0 video (at least 2×2),
    /// an even width for 4:2:2; 4:4:4 video, GIFs and images keep odd sides (at least 1×1).
    public func outputSize(for render: Size, sides: Size.PixelSides = .even) -> (width: Int, height: Int) {
        render.pixels(fitting: box(for: render), sides: sides)
    }

    /// Whether the preset is named for its box ("1920x1080", "HEVC3840x2160"): a size the
    /// user asked for, where the quality presets' boxes are only a most.
    public var namesItsSize: Bool {
        boundingBox.map { name.hasSuffix("\(Int($0.width))x\(Int($0.height))") } ?? false
    }

    /// The box a render of this size is fitted into, or nil when the preset keeps the size.
    /// A preset's box is landscape; a portrait render fits the box turned.
    public func box(for render: Size) -> Size? {
        boundingBox.map { render.height > render.width ? Size(width: $0.height, height: $0.width) : $0 }
    }
}
