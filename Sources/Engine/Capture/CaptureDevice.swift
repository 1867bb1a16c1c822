#if canImport(Glibc)
import Glibc
#endif
import CMoonFFmpeg
import CMoonAVShim
import MoonreelPlatform
import MoonreelMedia

/// What a capture device delivers, like `AVMediaType` for capture.
public enum CaptureMediaType: String, Sendable, CaseIterable {
    /// Pictures: a camera or a screen.
    case video
    /// Sound: a microphone.
    case audio
}

/// The libavdevice input a device is read through.
public enum CaptureBackend: String, Sendable, CaseIterable {
    /// Virtual devices made by libavfilter sources (`testsrc2`, `sine`): for tests and demos.
    case lavfi
    /// Video4Linux2 cameras (`/dev/video0`…).
    case v4l2
    /// The X11 screen (needs `DISPLAY`).
    case x11grab
    /// PulseAudio (or PipeWire's Pulse server) sources.
    case pulse
    /// ALSA capture devices (`hw:0`, `default`…).
    case alsa

    /// libavdevice's name of the input format.
    var inputFormatName: String { self == .v4l2 ? "video4linux2" : rawValue }
}

/// A range of frame rates a video format supports (a camera's discrete rate is a range of one).
public struct FrameRateRange: Sendable, Equatable {
    /// The lowest rate, frames per second.
    public let minimum: Double
    /// The highest rate, frames per second (equal to `minimum` for a single rate).
    public let maximum: Double
    /// Rates from `minimum` to `maximum` frames per second.
    public init(_ minimum: Double, _ maximum: Double) { (self.minimum, self.maximum) = (minimum, maximum) }
    func contains(_ rate: Double) -> Bool { rate >= minimum - 1e-6 && rate <= maximum + 1e-6 }
    var description: String {
        minimum == maximum ? "\(Self.text(minimum)) fps" : "\(Self.text(minimum))–\(Self.text(maximum)) fps"
    }
    static func text(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String((rate * 100).rounded() / 100)
    }
}

/// One way a device can deliver media: a picture size, pixel format and frame rates for
/// video; a sample rate and channel count for audio.
public struct CaptureFormat: Sendable, Equatable, CustomStringConvertible {
    /// Whether this is a video or an audio format.
    public let mediaType: CaptureMediaType
    /// Picture width in pixels (0 for audio).
    public let width: Int
    /// Picture height in pixels (0 for audio).
    public let height: Int
    /// FFmpeg's name ("yuyv422", "mjpeg", "yuv420p"); empty for audio.
    public let pixelFormat: String
    /// The frame rates the format runs at; empty when the backend does not say (any rate),
    /// and for audio.
    public let frameRateRanges: [FrameRateRange]
    /// Samples per second (0 for video).
    public let sampleRate: Int
    /// Audio channels (0 for video).
    public let channels: Int

    /// A video format of `width`×`height` pixels in FFmpeg pixel format `pixelFormat`, at
    /// `frameRates` (empty: any).
    public static func video(width: Int, height: Int, pixelFormat: String, frameRates: [FrameRateRange]) -> CaptureFormat {
        CaptureFormat(mediaType: .video, width: width, height: height, pixelFormat: pixelFormat,
                      frameRateRanges: frameRates, sampleRate: 0, channels: 0)
    }

    /// An audio format of `sampleRate` samples per second and `channels` channels.
    public static func audio(sampleRate: Int, channels: Int) -> CaptureFormat {
        CaptureFormat(mediaType: .audio, width: 0, height: 0, pixelFormat: "", frameRateRanges: [], sampleRate: sampleRate, channels: channels)
    }

    public var description: String {
        switch mediaType {
        case .video:
            let rates = frameRateRanges.map(\.description).joined(separator: ", ")
            return "\(width)×\(height) \(pixelFormat) \(rates.isEmpty ? "any rate" : rates)"
        case .audio:
            return "\(sampleRate) Hz \(channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels) channels")"
        }
    }

    /// Whether this format can run at `rate` frames per second (any rate when the
    /// backend does not say).
    func supports(frameRate rate: Double) -> Bool {
        frameRateRanges.isEmpty || frameRateRanges.contains { $0.contains(rate) }
    }

    /// The highest rate the format lists (30 when it lists none).
    var highestFrameRate: Double { frameRateRanges.map(\.maximum).max() ?? 30 }
}

/// A camera, screen or microphone (AVCaptureDevice), with the formats it reports and the
/// one chosen for recording.
public final class CaptureDevice: @unchecked Sendable {
    // `activeFormat`/`activeFrameRate` are set by the one script or command that owns the
    // device before a session starts, then only read by that session's input thread.
    /// The libavdevice input the device is read through.
    public let backend: CaptureBackend
    /// Whether the device records video or audio.
    public let mediaType: CaptureMediaType
    /// "backend:name", e.g. "lavfi:testsrc2", "v4l2:/dev/video0", "pulse:default".
    public let uniqueID: String
    /// A name for people, as the backend describes the device ("Integrated Camera"), like
    /// `AVCaptureDevice.localizedName`.
    public let localizedName: String
    /// What the backend reported, strongest first; empty when it cannot list formats.
    public let formats: [CaptureFormat]
    /// The format to record in (the first one until chosen).
    public var activeFormat: CaptureFormat?
    /// The video frame rate to record at (the active format's highest until chosen).
    public var activeFrameRate: Double?

    /// The device name handed to libavdevice (the part after "backend:").
    var inputName: String { String(uniqueID.dropFirst(backend.rawValue.count + 1)) }

    /// A device the backend can open by `name` (a v4l2 path, an ALSA or PulseAudio device name),
    /// for one `CaptureDevices.list` does not find; its unique ID is "backend:name" and its
    /// active format the first of `formats`.
    public init(backend: CaptureBackend, mediaType: CaptureMediaType, name: String, localizedName: String, formats: [CaptureFormat]) {
        self.backend = backend
        self.mediaType = mediaType
        uniqueID = "\(backend.rawValue):\(name)"
        self.localizedName = localizedName
        self.formats = formats
        activeFormat = formats.first
    }

    /// The format to record in and its rate.
    public var recordingFormat: (format: CaptureFormat, frameRate: Double) {
        let format = activeFormat ?? formats.first ?? (mediaType == .video
            ? .video(width: 640, height: 480, pixelFormat: "", frameRates: [])
            : .audio(sampleRate: 48000, channels: 2))
        return (format, activeFrameRate ?? format.highestFrameRate)
    }

    /// Picks the format for recording, like setting `activeFormat` after searching
    /// `formats`: the first with the size (when given) that supports the rate (when given),
    /// or the sample rate and channels for audio. Throws a one-line error naming the
    /// formats there are.
    @discardableResult
    public func selectFormat(width: Int? = nil, height: Int? = nil, frameRate: Double? = nil,
                             sampleRate: Int? = nil, channels: Int? = nil) throws -> CaptureFormat {
        if let frameRate, !(frameRate.isFinite && frameRate > 0 && frameRate <= 1000) {
            throw EngineError("frameRate must be above 0 and at most 1000 fps, got \(frameRate)")
        }
        let matching = formats.filter { format in
            (width.map { $0 == format.width } ?? true) && (height.map { $0 == format.height } ?? true)
                && (frameRate.map { format.supports(frameRate: $0) } ?? true)
                && (sampleRate.map { $0 == format.sampleRate } ?? true) && (channels.map { $0 == format.channels } ?? true)
        }
        guard let chosen = matching.first else {
            var wanted: [String] = []
            if width != nil || height != nil { wanted.append("\(width.map(String.init) ?? "any")×\(height.map(String.init) ?? "any")") }
            if let frameRate { wanted.append("at \(FrameRateRange.text(frameRate)) fps") }
            if let sampleRate { wanted.append("\(sampleRate) Hz") }
            if let channels { wanted.append("\(channels) channel\(channels == 1 ? "" : "s")") }
            let listed = formats.isEmpty ? "it lists none" : "it has " + formats.map(\.description).joined(separator: "; ")
            throw EngineError("\(mediaType == .video ? "camera" : "microphone") \"\(uniqueID)\" has no format \(wanted.joined(separator: " ")) (\(listed)); pick one of those", kind: .unsupported, subject: uniqueID)
        }
        activeFormat = chosen
        if mediaType == .video { activeFrameRate = frameRate ?? chosen.highestFrameRate }
        return chosen
    }
}

/// Finds capture devices through libavdevice.
public enum CaptureDevices {
    /// Registers libavdevice's inputs (once per process).
    static let registered: Void = { moon_avdevice_register() }()

    /// Every device of `type` that can be opened now: the lavfi virtual devices always,
    /// cameras (v4l2), the X screen (x11grab, when DISPLAY is set), PulseAudio sources and
    /// ALSA capture devices when present.
    public static func list(_ type: CaptureMediaType) -> [CaptureDevice] {
        listing(type).devices
    }

    /// The devices of `type` (of `backends` only, when given), and a line for each backend
    /// that could not be asked: an X display or PulseAudio server that does not answer
    /// within 2 s is given up, not waited for.
    public static func listing(_ type: CaptureMediaType, backends: Set<CaptureBackend> = Set(CaptureBackend.allCases))
        -> (devices: [CaptureDevice], problems: [String]) {
        _ = registered
        var devices: [CaptureDevice] = [], problems: [String] = []
        switch type {
        case .video:
            if backends.contains(.lavfi) { devices.append(virtualCamera()) }
            if backends.contains(.v4l2) { devices += V4L2Devices.list() }
            if backends.contains(.x11grab) {
                let screen = X11Screen.list()
                devices += screen.devices
                if let problem = screen.problem { problems.append(problem) }
            }
        case .audio:
            if backends.contains(.lavfi) { devices.append(virtualMicrophone()) }
            if backends.contains(.pulse) {
                if let sources = listedSources(.pulse) { devices += sources } else {
                    problems.append("the PulseAudio server does not answer (waited \(Int(X11Screen.answerTime)) s); its sources are not listed")
                }
            }
            if backends.contains(.alsa) { devices += ALSADevices.list() }
        }
        return (devices, problems)
    }

    /// The device with this unique ID (or, failing that, this localized name), of `type`
    /// or of either type. A unique ID ("lavfi:testsrc2", "v4l2:/dev/video0") asks its own
    /// backend only: opening the virtual camera never waits on an X display.
    public static func device(_ id: String, type: CaptureMediaType? = nil) throws -> CaptureDevice {
        let backend = CaptureBackend.allCases.first { id.hasPrefix($0.rawValue + ":") }
        let types = type.map { [$0] } ?? CaptureMediaType.allCases
        let listings = types.map { listing($0, backends: backend.map { [$0] } ?? Set(CaptureBackend.allCases)) }
        let devices = listings.flatMap(\.devices)
        if let device = devices.first(where: { $0.uniqueID == id }) ?? devices.first(where: { $0.localizedName == id }) { return device }
        // Not there: the message lists every backend's devices (each probe bounded).
        let everything = backend == nil ? listings : types.map { listing($0) }
        let problems = everything.flatMap(\.problems)
        let known = everything.flatMap(\.devices).map(\.uniqueID)
        throw EngineError("no \(type.map { $0.rawValue + " " } ?? "")capture device \"\(id)\" (there are: \(known.joined(separator: ", ")))"
                          + (problems.isEmpty ? "" : "; " + problems.joined(separator: "; "))
                          + "; list them with `moonreel record --list`", kind: .notFound, subject: id)
    }

    /// libavfilter's `testsrc2`: any size; these are the usual ones (1280×1024, a 5:4
    /// webcam's, is the one a preset's box fits at a fraction of a pixel).
    static func virtualCamera() -> CaptureDevice {
        let sizes = [(320, 240), (640, 480), (1280, 720), (1280, 1024), (1920, 1080)]
        return CaptureDevice(backend: .lavfi, mediaType: .video, name: "testsrc2", localizedName: "Virtual camera (testsrc2)",
                             formats: sizes.map { .video(width: $0.0, height: $0.1, pixelFormat: "yuv420p", frameRates: [FrameRateRange(1, 120)]) })
    }

    /// libavfilter's `sine` (a 440 Hz tone).
    static func virtualMicrophone() -> CaptureDevice {
        CaptureDevice(backend: .lavfi, mediaType: .audio, name: "sine", localizedName: "Virtual microphone (sine 440 Hz)",
                      formats: [.audio(sampleRate: 48000, channels: 2), .audio(sampleRate: 48000, channels: 1),
                                .audio(sampleRate: 44100, channels: 2), .audio(sampleRate: 44100, channels: 1)])
    }

    /// Sources a backend lists through `avdevice_list_input_sources` (PulseAudio needs a
    /// running server; none listed otherwise); nil when the backend did not answer in time.
    static func listedSources(_ backend: CaptureBackend) -> [CaptureDevice]? {
        let formatName = backend.inputFormatName
        let sources = withDeadline(seconds: X11Screen.answerTime) { () -> [[String]] in
            final class Found { var sources: [[String]] = [] }
            let found = Found()
            _ = moon_avdevice_sources(formatName, { context, name, description in
                guard let context, let name else { return }
                let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                found.sources.append([String(cString: name), description.map { String(cString: $0) } ?? String(cString: name)])
            }, Unmanaged.passUnretained(found).toOpaque())
            return found.sources
        }
        return sources?.map {
            CaptureDevice(backend: backend, mediaType: .audio, name: $0[0], localizedName: $0[1], formats: standardAudioFormats)
        }
    }

    /// What PulseAudio and ALSA's plug layer convert to for any microphone.
    static let standardAudioFormats: [CaptureFormat] = [
        .audio(sampleRate: 48000, channels: 2), .audio(sampleRate: 48000, channels: 1),
        .audio(sampleRate: 44100, channels: 2), .audio(sampleRate: 44100, channels: 1),
    ]
}
