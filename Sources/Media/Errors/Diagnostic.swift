import Synchronization

/// A place in a file: the script line that caused something, or the line of a cue file.
public struct SourceLine: Sendable, Hashable, CustomStringConvertible {
    /// The file as the user named it (a script's chunk name, a cue file's path).
    public let file: String
    /// From 1.
    public let line: Int

    /// `file`, line `line`.
    public init(file: String, line: Int) {
        (self.file, self.line) = (file, line)
    }

    /// "file:line".
    public var description: String { "\(file):\(line)" }
}

/// Something Moonreel did other than exactly what it was asked: dropped, truncated,
/// clamped, substituted, rounded or guessed. Every such decision is reported as one of
/// these, so an unattended batch can trust its report: nothing is decided in silence.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// What kind of decision it was; `docs/diagnostics.md` lists them all.
    public enum Kind: String, Sendable, CaseIterable {
        /// Text was drawn smaller than its font size so that it fits (`minimumScaleFactor`).
        case textShrunk
        /// Text did not fit its layer and was cut (with an ellipsis, or lines left out).
        case textTruncated
        /// Characters of a text are in no installed font: each is drawn as a box.
        case glyphMissing
        /// A text's font is not installed, so fontconfig drew it in another.
        case fontSubstituted
        /// Text runs past its layer's box and is drawn outside it.
        case textOverflow
        /// A cue is never shown (it ends before it starts, or lies outside the composition).
        case cueHidden
        /// A cue file or cue list holds no line to show.
        case cuesEmpty
        /// A cue file's block could not be read and was left out.
        case cueDropped
        /// Cues overlap in time, so they are drawn at once.
        case cuesOverlap
        /// Cues are drawn over a composition whose time an edit moved, at the file's times.
        case cuesNotRemapped
        /// A cut was left out because the stretch it would make is too short to see.
        case cutLeftOut
        /// A level was chosen from the media itself (a silence threshold from the room's noise).
        case thresholdChosen
        /// An edit that takes parts out found nothing to take out.
        case nothingRemoved
        /// No pulse in the tempos considered (or a script allowed): no tempo and no beats.
        case pulseNotFound
        /// A clip's pictures are shown in several output frames (its rate is under the output's).
        case frameRepeated
        /// A frame rate was chosen for the output that the sources did not state as such.
        case frameRateChosen
        /// A clip is drawn at a size or shape other than the frame's (at its own size, from
        /// the top-left corner), or a text or picture layer lies past the frame.
        case layerOffFrame
        /// A recording left frame slots without a picture or dropped sound (the device was late
        /// or skipped, the encoder fell behind), or an export's rate leaves pictures of a
        /// faster clip out.
        case framesDropped
        /// An animation's values or key times do not all take effect.
        case animationIgnored
        /// A setting was left out or could not be kept (Dolby Vision, a copy of a changed filter).
        case optionIgnored
        /// A size was rounded to what the codec takes.
        case sizeRounded
        /// Sound was left out of the output.
        case soundLeftOut
        /// The picture and the sound end apart: the last picture, black or silence fills the rest.
        case trackShorter
        /// The output stopped early to stay within a limit.
        case lengthLimited
        /// A `timeRange` reaches past the composition: less was written (or measured) than asked.
        case rangeClipped
        /// A video track has media where no layer instruction draws it, so it is not shown.
        case trackNotDrawn
        /// The mix went over full scale and the limiter turned it down: quieter than its
        /// volumes ask.
        case soundLimited
        /// A loudness target could not be met.
        case loudnessMissed
        /// The export encodes otherwise than asked (a SmartCut or smart render falling back),
        /// or keeps parts rendered earlier.
        case encodingChanged
        /// A file or device was not as expected but the work went on (a recording's source
        /// left in place, a library journal refused, a device listing that failed).
        case fileNotAsExpected
        /// Part of an edit has no place in a timeline file (a text layer, a filter, a slide
        /// transition) and was left out or written in another form.
        case notInTimeline
        /// Times were rounded to what a format counts: whole frames (an EDL), hundredths of a
        /// second (a GIF's frames).
        case timeRounded
        /// An effect did other than it was asked and says so (`effect.warn`, `effect.note`):
        /// a framing past a picture's edge, a value it had to change.
        case effectAdjusted
    }

    /// How much it matters: a note explains; a warning means the result differs from what
    /// was asked, and `strict` makes it an error before the output is committed.
    public enum Level: String, Sendable {
        /// An explanation of a choice that keeps what was asked.
        case note
        /// The result differs from what was asked.
        case warning
    }

    /// What kind of decision it was.
    public let kind: Kind
    /// How much it matters.
    public let level: Level
    /// What happened, one line, naming the subject.
    public let message: String
    /// What to do about it, when something can be done.
    public var remedy: String?
    /// The script line that caused it (set by the host that ran the script).
    public var origin: SourceLine?
    /// The line of a data file it concerns (a cue's line in its CSV or SRT file).
    public var dataLine: SourceLine?
    /// Where on the composition's timeline it shows, in seconds, when it has one place.
    public var time: Double?

    /// A diagnostic of `kind` at `level` saying `message`.
    public init(_ kind: Kind, _ level: Level, _ message: String, remedy: String? = nil, origin: SourceLine? = nil,
                dataLine: SourceLine? = nil, time: Double? = nil) {
        (self.kind, self.level, self.message, self.remedy) = (kind, level, message, remedy)
        (self.origin, self.dataLine, self.time) = (origin, dataLine, time)
    }

    /// "script.lua:12: " + `text`, one line.
    public var description: String { (origin.map { "\($0): " } ?? "") + text }

    /// "message (lyrics.csv:5); remedy": what happened and what to do, without the script line.
    public var text: String {
        var text = message
        if let dataLine, !message.contains(dataLine.description) { text += " (\(dataLine))" }
        if let remedy { text += "; " + remedy }
        return text
    }
}

/// The diagnostics of a piece of work, in the order they came, each once (a repeat is
/// counted, not kept twice). Safe to use from render threads.
public final class DiagnosticLog: Sendable {
    private let entries = Mutex<[(diagnostic: Diagnostic, count: Int)]>([])

    /// An empty log.
    public init() {}

    /// Adds `diagnostic`, or counts it again if it was already reported; whether it is new.
    @discardableResult
    public func report(_ diagnostic: Diagnostic) -> Bool {
        entries.withLock { entries in
            if let index = entries.firstIndex(where: { $0.diagnostic == diagnostic }) {
                entries[index].count += 1
                return false
            }
            entries.append((diagnostic, 1))
            return true
        }
    }

    /// Each diagnostic once, in the order they came.
    public var all: [Diagnostic] { entries.withLock { $0.map(\.diagnostic) } }

    /// How often each diagnostic came.
    public var counted: [(diagnostic: Diagnostic, count: Int)] { entries.withLock { $0 } }

    /// The warnings among them.
    public var warnings: [Diagnostic] { all.filter { $0.level == .warning } }
}
