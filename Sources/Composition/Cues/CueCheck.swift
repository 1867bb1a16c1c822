import MoonreelMedia

/// What makes timed text go wrong on screen although it reads fine: lines that overlap in
/// time (drawn at once), lines that last no time or have no text, and lines after the end
/// of the video (never shown) or running past it.
public enum CueCheck {
    /// In time order: "cues 3 (0:12.40–0:15.00) and 4 (0:14.20–0:16.00) overlap by 0.80 s"
    /// (a note: both are drawn), a cue never shown or cut at the end (warnings). `duration`:
    /// the video's length, when known; `file` names the cues' file in each message.
    public static func problems(in cues: [Cue], duration: MediaTime? = nil, file: String? = nil) -> [Diagnostic] {
        var problems: [Diagnostic] = []
        let prefix = file.map { "\($0): " } ?? ""
        let numbered = cues.enumerated().map { (name: $0.element.identifier.map { "\"\($0)\"" } ?? "\($0.offset + 1)", cue: $0.element) }
        var latest: (name: String, cue: Cue)? = nil // the showing cue that ends last
        for entry in numbered {
            if let earlier = latest, earlier.cue.end > entry.cue.start {
                let overlap = MediaTime.min(earlier.cue.end, entry.cue.end) - entry.cue.start
                problems.append(Diagnostic(.cuesOverlap, .note, prefix + "cues \(earlier.name) (\(span(earlier.cue))) and \(entry.name) (\(span(entry.cue))) overlap by \(seconds(overlap)) s",
                                           time: entry.cue.start.seconds))
            }
            if latest.map({ entry.cue.end > $0.cue.end }) ?? true { latest = entry }
            if entry.cue.end <= entry.cue.start {
                problems.append(Diagnostic(.cueHidden, .warning, prefix + "cue \(entry.name) (\(span(entry.cue))) lasts 0 s: it is never shown",
                                           remedy: "give it an end after its start", dataLine: entry.cue.source, time: entry.cue.start.seconds))
            } else if entry.cue.text.trimmed.isEmpty {
                problems.append(Diagnostic(.cueHidden, .warning, prefix + "cue \(entry.name) (\(span(entry.cue))) has no text: nothing is shown while it lasts",
                                           remedy: "give it its words, or remove it", dataLine: entry.cue.source, time: entry.cue.start.seconds))
            }
            guard let duration else { continue }
            if entry.cue.start >= duration {
                problems.append(Diagnostic(.cueHidden, .warning, prefix + "cue \(entry.name) (\(span(entry.cue))) starts after the video ends (\(clock(duration))): it is never shown"))
            } else if entry.cue.end > duration {
                problems.append(Diagnostic(.cueHidden, .warning, prefix + "cue \(entry.name) (\(span(entry.cue))) runs past the video's end (\(clock(duration))): it is cut there",
                                           time: duration.seconds))
            }
        }
        return problems
    }

    private static func span(_ cue: Cue) -> String { "\(clock(cue.start))–\(clock(cue.end))" }

    /// m:ss.xx
    public static func clock(_ time: MediaTime) -> String {
        let hundredths = Int((time.seconds * 100).rounded())
        let (minutes, rest) = (hundredths / 6000, hundredths % 6000)
        let (whole, fraction) = (rest / 100, rest % 100)
        return "\(minutes):\(whole < 10 ? "0" : "")\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    private static func seconds(_ time: MediaTime) -> String {
        let hundredths = Int((time.seconds * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}
