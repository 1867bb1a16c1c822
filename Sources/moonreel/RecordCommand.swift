import ArgumentParser
import MoonreelEngine
import MoonreelScriptHost
import MoonreelBindings
#if canImport(Glibc)
import Glibc
#endif

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record a camera, screen and/or microphone to a fragmented MP4 (Ctrl-C stops and finishes the file).",
        discussion: """
            Devices are named by their IDs from --list: lavfi:testsrc2 and lavfi:sine are virtual \
            ones for tests; v4l2:/dev/video0, x11grab::0, pulse:default, alsa:plughw:0,0 are real. \
            The file is written beside OUTPUT under a hidden name and moved into place when \
            recording stops; if moonreel is killed, that hidden .recording.mp4 file plays up to its \
            last second (docs/recording.md).
            """)
    @Flag(help: "List the capture devices and their formats, then exit.") var list = false
    @Option(help: "Camera or screen to record (a device ID from --list).") var video: String?
    @Option(help: "Microphone to record (a device ID from --list).") var audio: String?
    @Option(help: "Picture size WIDTHxHEIGHT (one of the camera's formats).") var size: String?
    @Option(help: "Frames per second.") var rate: Double?
    @Option(help: "Audio sample rate in Hz.") var sampleRate: Int?
    @Option(help: "Audio channels (1 or 2).") var channels: Int?
    @Option(help: "Export preset for encoding (MediumQuality, HighestQuality, 1280x720…).") var preset = "MediumQuality"
    @Option(help: "Stop after this many seconds.") var duration: Double?
    @Option(help: "Stop before the file grows past this many bytes.") var maxSize: Int64?
    @Flag(help: "Replace OUTPUT if it exists (only once the recording is finished).") var overwrite = false
    @Flag(help: "Print nothing but errors.") var quiet = false
    @Option(name: .shortAndLong, help: "The movie file to write (.mp4 or .mov).") var output: String?

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0 && duration <= 1e7) {
            throw ValidationError("--duration must be seconds above 0, got \(duration)")
        }
        if let maxSize, maxSize < 256 * 1024 { throw ValidationError("--max-size must be at least 262144 bytes, got \(maxSize)") }
        if let channels, !(1...2).contains(channels) { throw ValidationError("--channels must be 1 or 2, got \(channels)") }
        if ExportPreset.named(preset) == nil {
            throw ValidationError("unknown preset \(preset.quotedForMessage()) (known: \(ExportPreset.names.joined(separator: ", ")))")
        }
        guard !list else { return }
        guard video != nil || audio != nil else { throw ValidationError("give --video and/or --audio (device IDs from moonreel record --list)") }
        // A device's settings without the device would be dropped in silence.
        let pictureOnly = [size.map { _ in "--size" }, rate.map { _ in "--rate" }].compactMap { $0 }
        if video == nil, !pictureOnly.isEmpty { throw ValidationError("\(pictureOnly.joined(separator: " and ")) \(pictureOnly.count == 1 ? "sets" : "set") the camera's format; give --video too, or leave \(pictureOnly.count == 1 ? "it" : "them") out") }
        let soundOnly = [sampleRate.map { _ in "--sample-rate" }, channels.map { _ in "--channels" }].compactMap { $0 }
        if audio == nil, !soundOnly.isEmpty { throw ValidationError("\(soundOnly.joined(separator: " and ")) \(soundOnly.count == 1 ? "sets" : "set") the microphone's format; give --audio too, or leave \(soundOnly.count == 1 ? "it" : "them") out") }
        guard output != nil else { throw ValidationError("give the file to write with -o/--output") }
    }

    func run() throws {
        FFmpegLog.capture()
        if list {
            for type in CaptureMediaType.allCases {
                print("\(type.rawValue):")
                let listing = CaptureDevices.listing(type)
                for device in listing.devices {
                    print("  \(device.uniqueID)  \(device.localizedName)")
                    for format in device.formats { print("    \(format)") }
                }
                for problem in listing.problems { printError("moonreel: note: \(problem)") }
            }
            return
        }
        let session = CaptureSession()
        session.overwrite = overwrite
        session.preset = ExportPreset.named(preset)
        session.maxDuration = duration.flatMap { MediaTime(seconds: $0) }
        session.maxFileSize = maxSize
        let path = output ?? ""
        do {
            if let video {
                let camera = try CaptureDevices.device(video, type: .video)
                let dimensions = try size.map(Self.dimensions)
                try camera.selectFormat(width: dimensions?.width, height: dimensions?.height, frameRate: rate)
                try session.addInput(camera)
            }
            if let audio {
                let microphone = try CaptureDevices.device(audio, type: .audio)
                try microphone.selectFormat(sampleRate: sampleRate, channels: channels)
                try session.addInput(microphone)
            }
            // Ctrl-C stops and finishes the file; a second one exits at once (the hidden
            // recording file stays playable up to its last fragment).
            _ = SignalWatcher.start { session.requestStop() }
            try session.startRecording(to: path)
            if !quiet { for diagnostic in session.diagnostics { printError(ProgressDisplay.line(diagnostic)) } }
        } catch {
            printError("moonreel: \(error)".oneLine)
            throw ExitCode(Exit.failed)
        }
        var failed = false
        while let event = session.nextEvent() {
            switch event {
            case .started(let path):
                if !quiet { printError("moonreel: recording \(path) (Ctrl-C stops)") }
            case .finished(let summary):
                if !quiet {
                    print(Self.describe(summary))
                    for diagnostic in summary.diagnostics { printError(ProgressDisplay.line(diagnostic)) }
                }
            case .failed(let error):
                printError("moonreel: \(error)".oneLine)
                failed = true
            }
        }
        session.waitUntilFinished()
        if failed { throw ExitCode(Exit.failed) }
    }

    static func dimensions(_ text: String) throws -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts.allSatisfy({ (2...16384).contains($0) }) else {
            throw ValidationError("--size must be WIDTHxHEIGHT, e.g. 1280x720, got \(text.quotedForMessage())")
        }
        return (parts[0], parts[1])
    }

    static func describe(_ summary: CaptureSummary) -> String {
        "\(summary.path): \(rounded(summary.duration.seconds, 3)) s, \(summary.videoFrames) frames (\(summary.droppedVideoFrames) dropped), "
            + "\(summary.audioSamples) audio samples (\(summary.droppedAudioSamples) dropped), \(summary.fileSize) bytes; reason: \(summary.reason.rawValue)"
    }
}
