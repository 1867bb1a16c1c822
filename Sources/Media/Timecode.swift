import CMoonFFmpeg

/// A file's start timecode, as a camera or an editor stamps it (a QuickTime/MP4 `tmcd`
/// track, an MXF or Matroska timecode tag): the label of the file's time `origin`,
/// `01:00:00:00`, or `01:00:00;00` when it counts drop-frame. Editors count a clip's
/// source times from it, so a timeline file's source times are `time` plus the time into
/// the file (`editorTime(of:)`).
public struct Timecode: Sendable, Hashable, CustomStringConvertible {
    /// Frames from 00:00:00:00 to the first frame (drop-frame skips labels, not frames).
    public let frame: Int64
    /// The counting rate as a frame's duration (1001/30000 s for 29.97).
    public let frameDuration: MediaTime
    /// Whether the labels skip two frame numbers a minute, as 29.97 and 59.94 fps drop-frame
    /// timecode does to keep up with the clock.
    public let dropFrame: Bool
    /// The time in the file the label names: where its timecode track starts (QuickTime's
    /// movie time of its first sample), else the first video frame's.
    public let origin: MediaTime

    /// Reads a timecode label `text` ("HH:MM:SS:FF", or "HH:MM:SS;FF" for drop-frame, as
    /// FFmpeg's tags write it) counting frames of `frameDuration` (the timecode track's, else
    /// the video's); nil when it labels no frame at that rate: hours under 24, minutes and
    /// seconds under 60, frames under the rate, and none of the labels drop-frame skips.
    public init?(_ text: String, frameDuration: MediaTime, origin: MediaTime) {
        // FFmpeg writes the frames in as many digits as the rate has (one under 10 fps, three from 100).
        let bytes = Array(text.utf8)
        guard (10...12).contains(bytes.count), [2, 5].allSatisfy({ bytes[$0] == UInt8(ascii: ":") }), bytes[8] == UInt8(ascii: ":") || bytes[8] == UInt8(ascii: ";"),
              frameDuration.value > 0, frameDuration.timescale > 0, frameDuration.value <= Int64(Int32.max) else { return nil }
        let fields = [0..<2, 3..<5, 6..<8, 9..<bytes.count].map { (digits: Range<Int>) -> Int32 in
            bytes[digits].allSatisfy { (0x30...0x39).contains($0) } ? bytes[digits].reduce(0) { $0 * 10 + Int32($1) - 0x30 } : -1
        }
        let (hours, minutes, seconds, frames) = (fields[0], fields[1], fields[2], fields[3])
        let drop = bytes[8] == UInt8(ascii: ";")
        var timecode = AVTimecode()
        guard fields.allSatisfy({ $0 >= 0 }), hours < 24, minutes < 60, seconds < 60,
              av_timecode_init_from_components(&timecode, Timecode.rate(frameDuration), Int32(drop ? AV_TIMECODE_FLAG_DROPFRAME.rawValue : 0),
                                               hours, minutes, seconds, frames, nil) >= 0,
              frames < Int32(clamping: timecode.fps),
              !(drop && seconds == 0 && minutes % 10 != 0 && frames < Int32(clamping: timecode.fps / 15)) else { return nil }
        frame = Int64(timecode.start)
        self.frameDuration = frameDuration
        dropFrame = drop
        self.origin = origin
    }

    /// The first frame's place on the clock, counted as editors count source times.
    public var time: MediaTime { frameDuration * frame }

    /// Where `fileTime` (a time in the file, as Moonreel reads it) lies in the timecode's count.
    public func editorTime(of fileTime: MediaTime) -> MediaTime { time + (fileTime - origin) }

    /// The label of the frame shown at `fileTime`, the one that starts there or before.
    public func label(at fileTime: MediaTime) -> String {
        Timecode.label(frame: frame + Swift.max(0, (fileTime - origin).floorDivided(by: frameDuration)), frameDuration: frameDuration, dropFrame: dropFrame)
    }

    /// The label of the first frame: "01:00:00:00", "01:00:00;00".
    public var description: String { Timecode.label(frame: frame, frameDuration: frameDuration, dropFrame: dropFrame) }

    /// The label of frame `frame` counted from 00:00:00:00 at frames of `frameDuration`,
    /// drop-frame (29.97 and 59.94 fps only) or not, wrapping at 24 hours as timecode does.
    /// Under half a frame a second (a slideshow's frames), frames are counted as seconds, as
    /// timecode counts at least one frame a second.
    package static func label(frame: Int64, frameDuration: MediaTime, dropFrame: Bool) -> String {
        var timecode = AVTimecode()
        let flags = Int32(dropFrame ? AV_TIMECODE_FLAG_DROPFRAME.rawValue : 0) | Int32(AV_TIMECODE_FLAG_24HOURSMAX.rawValue)
        if av_timecode_init(&timecode, Timecode.rate(frameDuration), flags, 0, nil) < 0 {
            guard av_timecode_init(&timecode, AVRational(num: 1, den: 1), Int32(AV_TIMECODE_FLAG_24HOURSMAX.rawValue), 0, nil) >= 0 else { return "" }
        }
        var buffer = [CChar](repeating: 0, count: Int(AV_TIMECODE_STR_SIZE))
        let label = buffer.withUnsafeMutableBufferPointer { out in
            av_timecode_make_string(&timecode, out.baseAddress, Int32(clamping: frame)).map { String(cString: $0) } ?? ""
        }
        // Two digits of frames at least, as CMX 3600 and editors read them (FFmpeg writes one under 10 fps).
        return label.count == 10 ? String(label.dropLast()) + "0" + String(label.suffix(1)) : label
    }

    /// Whether frames of `frameDuration` may be labelled drop-frame: 29.97 and 59.94 fps.
    package static func allowsDropFrame(_ frameDuration: MediaTime) -> Bool {
        frameDuration == MediaTime(value: 1001, timescale: 30000) || frameDuration == MediaTime(value: 1001, timescale: 60000)
    }

    private static func rate(_ frameDuration: MediaTime) -> AVRational {
        AVRational(num: frameDuration.timescale, den: Int32(clamping: frameDuration.value))
    }
}
