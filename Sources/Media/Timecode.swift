import CMoonFFmpeg

/// A file's start timecode, as a camera or an editor stamps it (a QuickTime/MP4 `tmcd`
/// track, an MXF or Matroska timecode tag): the label of its first video frame,
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
    /// The time in the file where the label lies: its first video frame.
    public let origin: MediaTime

    /// Reads FFmpeg's `timecode` tag `text` counting frames of `frameDuration` (the timecode
    /// track's, else the video's); nil when it is no timecode at that rate: four groups of
    /// digits, minutes and seconds under 60, frames under the rate.
    public init?(_ text: String, frameDuration: MediaTime, origin: MediaTime) {
        // FFmpeg's reading stops after the frames and checks none of the numbers.
        let groups = text.split(omittingEmptySubsequences: false) { ":;.,".contains($0) }
        let numbers = groups.compactMap { $0.count <= 3 && $0.allSatisfy { $0.isASCII && $0.isNumber } ? Int($0) : nil }
        guard groups.count == 4, numbers.count == 4, numbers[1] < 60, numbers[2] < 60 else { return nil }
        var timecode = AVTimecode()
        guard frameDuration.value > 0, frameDuration.timescale > 0, frameDuration.value <= Int64(Int32.max),
              av_timecode_init_from_string(&timecode, Timecode.rate(frameDuration), text, nil) >= 0, timecode.start >= 0,
              numbers[3] < Int(timecode.fps) else { return nil }
        frame = Int64(timecode.start)
        self.frameDuration = frameDuration
        dropFrame = timecode.flags & UInt32(AV_TIMECODE_FLAG_DROPFRAME.rawValue) != 0
        self.origin = origin
    }

    /// The first frame's place on the clock, counted as editors count source times.
    public var time: MediaTime { frameDuration * frame }

    /// Where `fileTime` (a time in the file, as Moonreel reads it) lies in the timecode's count.
    public func editorTime(of fileTime: MediaTime) -> MediaTime { time + (fileTime - origin) }

    /// The label of the frame shown at `fileTime`, the one that starts there or before.
    public func label(at fileTime: MediaTime) -> String {
        label(frame: frame + Swift.max(0, (fileTime - origin).floorDivided(by: frameDuration)))
    }

    /// The label of the first frame: "01:00:00:00", "01:00:00;00".
    public var description: String { label(frame: frame) }

    private func label(frame: Int64) -> String {
        var timecode = AVTimecode()
        let rate = Timecode.rate(frameDuration)
        let flags = Int32(dropFrame ? AV_TIMECODE_FLAG_DROPFRAME.rawValue : 0) | Int32(AV_TIMECODE_FLAG_24HOURSMAX.rawValue)
        guard av_timecode_init(&timecode, rate, flags, 0, nil) >= 0 else { return "" }
        var buffer = [CChar](repeating: 0, count: Int(AV_TIMECODE_STR_SIZE))
        return buffer.withUnsafeMutableBufferPointer { out in
            av_timecode_make_string(&timecode, out.baseAddress, Int32(clamping: frame)).map { String(cString: $0) } ?? ""
        }
    }

    private static func rate(_ frameDuration: MediaTime) -> AVRational {
        AVRational(num: frameDuration.timescale, den: Int32(clamping: frameDuration.value))
    }
}
