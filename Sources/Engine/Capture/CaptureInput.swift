#if canImport(Glibc)
import Glibc
#endif
import CMoonFFmpeg
import CMoonAVShim
import Synchronization
import MoonreelPlatform
import MoonreelMedia

/// What an input thread hands the writer: a converted picture or block of samples stamped
/// on the session's timeline, or the end of that input.
enum CapturedMedia: Sendable {
    case video(Frame, time: MediaTime)
    /// Planar float samples; `position` counts samples from the session's start.
    case audio([[Float]], position: Int64)
    /// The input stopped; with a message when its device failed.
    case ended(failure: String?)
}

/// Nanoseconds of the monotonic clock (the session's timeline and lavfi pacing).
func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// One opened device: its demuxer and decoder, and the loop its own thread runs to
/// decode, convert and hand frames to the writer without ever waiting on it.
final class CaptureInput: @unchecked Sendable {
    // Owned by its reader thread once `start` runs; `stop` only sets the interrupt flag.
    let device: CaptureDevice
    let format: CaptureFormat
    let frameRate: Double
    let label: String
    private let demuxer: Demuxer
    private let decoder: StreamDecoder
    private let streamIndex: Int32
    /// Samples the writer could not take in time (audio; the writer counts missing pictures).
    let droppedSamples = Atomic<Int64>(0)
    /// Items of this input waiting in the writer's queue, and how many may wait, so a slow
    /// encoder drops pictures evenly instead of letting one input starve the other: up to
    /// two seconds of pictures within 64 MiB, five seconds of sound (small blocks).
    let backlog = Atomic<Int>(0)
    let backlogLimit: Int
    /// Set once `run` will no longer touch the device (its thread is about to end).
    let finished = Atomic<Bool>(false)

    init(device: CaptureDevice) throws {
        _ = CaptureDevices.registered
        self.device = device
        (format, frameRate) = device.recordingFormat
        if device.mediaType == .video {
            let pictureBytes = max(format.width * format.height * 3 / 2, 1)
            backlogLimit = max(4, min(Int(min(max(frameRate, 1), 1000) * 2), (64 << 20) / pictureBytes))
        } else {
            backlogLimit = 250
        }
        label = "\(device.mediaType == .video ? "camera" : "microphone") \"\(device.uniqueID)\""
        guard device.mediaType == .audio || (frameRate.isFinite && frameRate > 0 && frameRate <= 1000) else {
            throw EngineError("\(label): cannot record at \(frameRate) fps; choose a rate above 0 and at most 1000 (the format's frameRate)", subject: label)
        }
        guard let inputFormat = av_find_input_format(device.backend.inputFormatName) else {
            throw EngineError("\(label): this FFmpeg has no \(device.backend.rawValue) input (install libavdevice with it)", kind: .unsupported, subject: label)
        }
        var (name, options) = CaptureInput.openRequest(device: device, format: format, frameRate: frameRate)
        // Reads that return EAGAIN instead of waiting for the driver, so a stop is seen even
        // when the device stalls (a camera with no signal): these libavdevice inputs never
        // consult the interrupt callback.
        if device.backend == .v4l2 || device.backend == .alsa { options["fflags"] = "nonblock" }
        let demuxer = try Demuxer(device: name, format: inputFormat, options: options, label: label)
        self.demuxer = demuxer
        let wanted = device.mediaType == .video ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO
        guard let index = (0..<demuxer.streamCount).first(where: { demuxer.stream($0)?.pointee.codecpar.pointee.codec_type == wanted }),
              let stream = demuxer.stream(index) else {
            throw EngineError("\(label): delivers no \(device.mediaType.rawValue)", kind: .unsupported, subject: label)
        }
        streamIndex = Int32(index)
        decoder = try StreamDecoder(stream: stream, label: label)
    }

    /// The name and options libavdevice opens the device with, in the chosen format.
    static func openRequest(device: CaptureDevice, format: CaptureFormat, frameRate: Double) -> (String, [String: String]) {
        let rate = FrameRateRange.text(frameRate)
        switch (device.backend, device.mediaType) {
        case (.lavfi, .video):
            return ("\(device.inputName)=size=\(format.width)x\(format.height):rate=\(rate)", [:])
        case (.lavfi, .audio):
            return ("\(device.inputName)=frequency=440:sample_rate=\(format.sampleRate)", [:])
        case (_, .video):
            var options = ["video_size": "\(format.width)x\(format.height)", "framerate": rate]
            if device.backend == .v4l2, !format.pixelFormat.isEmpty { options["input_format"] = format.pixelFormat }
            return (device.inputName, options)
        case (_, .audio):
            return (device.inputName, ["sample_rate": "\(format.sampleRate)", "channels": "\(format.channels)"])
        }
    }

    /// Interrupts a blocking read so the thread notices the stop.
    func interrupt() { demuxer.interruptFlag.pointee = 1 }

    /// Reads until `stop` is set, `limit` (the session's maxDuration) is reached or the
    /// device fails, handing each converted frame to `queue` (dropped and counted when it
    /// is full). Times are the device's own clock, placed on the session's timeline where
    /// its first frame arrived.
    func run(sessionStart: Int64, limit: MediaTime?, output: CaptureOutputFormat, queue: BoundedQueue<CapturedMedia>, stop: CancellationFlag) {
        var failure: String? = nil
        do {
            try read(sessionStart: sessionStart, limit: limit, output: output, queue: queue, stop: stop)
        } catch {
            if !stop.isCancelled { failure = "\(error)" }
        }
        finished.store(true, ordering: .releasing)
        queue.push(.ended(failure: failure))
    }

    private func read(sessionStart: Int64, limit: MediaTime?, output: CaptureOutputFormat, queue: BoundedQueue<CapturedMedia>, stop: CancellationFlag) throws {
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        defer { var maybe: UnsafeMutablePointer<AVPacket>? = packet; av_packet_free(&maybe) }
        let scaler = Scaler(flags: SWS_BILINEAR)
        let resampler = AudioResampler(outputRate: output.audio.sampleRate, channels: output.audio.channels, label: label)
        var firstPts: Int64? = nil
        var firstArrival: Int64 = 0
        var samplePosition: Int64 = 0
        let timeBase = decoder.timeBase
        while !stop.isCancelled {
            let status = av_read_frame(demuxer.context, packet)
            if status == MOON_AVERROR_EAGAIN { usleep(1000); continue }
            if status == MOON_AVERROR_EXIT || stop.isCancelled { return }
            if status == MOON_AVERROR_EOF { throw EngineError("\(label) stopped delivering (end of stream)", kind: .decode, subject: label) }
            try check(status, "reading", context: label)
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            try check(avcodec_send_packet(decoder.context, packet), "decoding", context: label)
            while true {
                let frame = try Frame()
                let received = avcodec_receive_frame(decoder.context, frame.pointer)
                if received == MOON_AVERROR_EAGAIN || received == MOON_AVERROR_EOF { break }
                try check(received, "decoding", context: label)
                let bestEffort = frame.pointer.pointee.best_effort_timestamp
                let pts = bestEffort != MOON_AV_NOPTS_VALUE ? bestEffort : frame.pointer.pointee.pts
                if firstPts == nil {
                    firstPts = pts == MOON_AV_NOPTS_VALUE ? 0 : pts
                    firstArrival = monotonicNanoseconds()
                    samplePosition = MediaTime(value: firstArrival - sessionStart, timescale: 1_000_000_000).count(in: output.audio.sampleRate)
                }
                let deviceTime = MediaTime(pts: (pts == MOON_AV_NOPTS_VALUE ? 0 : pts) - (firstPts ?? 0), timeBase: timeBase)
                if device.backend == .lavfi {
                    // libavfilter generates as fast as it can; a virtual device delivers in real time.
                    try pace(until: firstArrival + deviceTime.count(in: 1_000_000_000), stop: stop)
                    if stop.isCancelled { return }
                }
                let time = MediaTime(value: firstArrival - sessionStart, timescale: 1_000_000_000) + deviceTime
                switch device.mediaType {
                case .video:
                    if let limit, time >= limit { return }
                    let converted = try scaler.convert(frame, width: output.video.width, height: output.video.height,
                                                       format: output.video.color.pixelFormat, outputColor: output.video.color)
                    hand(.video(converted, time: time), to: queue)
                case .audio:
                    // Sound is counted in samples: a device's timestamps (PulseAudio's follow
                    // the wall clock less a varying latency) run ahead of what it delivered.
                    if let limit, samplePosition >= limit.count(in: output.audio.sampleRate) { return }
                    let samples = try resampler.convert(frame)
                    let count = Int64(samples.first?.count ?? 0)
                    guard count > 0 else { continue }
                    if !hand(.audio(samples, position: samplePosition), to: queue) { droppedSamples.add(count, ordering: .relaxed) }
                    samplePosition += count
                }
            }
        }
    }

    /// Queues an item unless this input's backlog is full; false when it was dropped.
    @discardableResult
    private func hand(_ item: CapturedMedia, to queue: BoundedQueue<CapturedMedia>) -> Bool {
        guard backlog.load(ordering: .relaxed) < backlogLimit else { return false }
        backlog.add(1, ordering: .relaxed)
        guard queue.tryPush(item) else {
            backlog.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Sleeps until the monotonic clock reaches `deadline`, in short steps so a stop is seen.
    private func pace(until deadline: Int64, stop: CancellationFlag) throws {
        while !stop.isCancelled {
            let remaining = deadline - monotonicNanoseconds()
            guard remaining > 0 else { return }
            var pause = timespec(tv_sec: 0, tv_nsec: Int(min(remaining, 50_000_000)))
            nanosleep(&pause, nil)
        }
    }
}

/// What the session encodes: the picture the video encoder takes and the audio format.
struct CaptureOutputFormat: Sendable {
    struct Video: Sendable {
        let width: Int
        let height: Int
        let frameDuration: MediaTime
        let color: ColorDescription
    }
    let video: Video
    let audio: AudioFormat
}
