import MoonreelEngine

/// A CMX 3600 edit decision list (`.edl`) of one video track: an event per clip, a
/// dissolve or wipe as the event that brings in the next clip (starting at the transition's
/// start, as CMX 3600 counts it), a speed change as an M2 line, markers as LOC comments.
/// Timecode counts whole frames at the timeline's rate (29.97 counts as 30; drop-frame when
/// the sources were stamped so, `Timeline.dropFrame`), so
/// times between frames are rounded, with one `timeRounded` note saying how many.
enum EDL {
    static func encode(_ timeline: Timeline, path: (String) -> String) -> (text: String, notes: [Diagnostic]) {
        var notes: [Diagnostic] = []
        let videoTracks = timeline.tracks.filter { $0.kind == .video }, audioTracks = timeline.tracks.filter { $0.kind == .audio }
        let track = videoTracks.first ?? audioTracks.first ?? Timeline.Track(kind: .video, name: "V1", items: [])
        let withSound = track.kind == .video && audioTracks.first.map { $0.mirrors(track) } == true
        for other in timeline.tracks where other != track && !(withSound && other == audioTracks.first) {
            notes.append(Diagnostic(.notInTimeline, .warning, "track \(other.name) is left out: an EDL holds one track (write OTIO or FCPXML to keep it)"))
        }
        var grid = FrameGrid(timeline.frameDuration)
        let rate = max(1, Int64((1 / grid.frame.seconds).rounded()))
        func frames(_ t: MediaTime) -> Int64 { grid.frames(t) }
        func timecode(_ count: Int64) -> String {
            Timecode.label(frame: count, frameDuration: grid.frame, dropFrame: timeline.dropFrame)
        }
        let channel = track.kind == .audio ? "AA" : withSound ? "AA/V" : "V"
        func line(_ number: Int, _ reel: String, _ kind: String, _ source: (Int64, Int64), _ record: (Int64, Int64)) -> String {
            let n = number < 10 ? "00\(number)" : number < 100 ? "0\(number)" : "\(number)"
            return "\(n)  \(pad(reel, 8)) \(pad(channel, 5)) \(pad(kind, 8)) \(timecode(source.0)) \(timecode(source.1)) \(timecode(record.0)) \(timecode(record.1))"
        }

        var lines = ["TITLE: \(timeline.name.isEmpty ? "Moonreel" : String(timeline.name.prefix(70)))", "FCM: \(timeline.dropFrame ? "DROP FRAME" : "NON-DROP FRAME")", ""]
        // Each clip with its place and the transitions around it: a CMX 3600 event runs until the next
        // transition starts, and the incoming clip's event starts with it.
        var entries: [(clip: Timeline.Clip, at: MediaTime, into: TimelineTransition?, outgoing: Timeline.Clip?)] = []
        var at = MediaTime.zero, waiting: TimelineTransition? = nil, last: Timeline.Clip? = nil
        for item in track.items {
            switch item {
            case .gap(let length): (at, last, waiting) = (at + length, nil, nil)
            case .transition(let t): waiting = last == nil ? nil : t
            case .clip(let clip):
                entries.append((clip, at, waiting, waiting == nil ? nil : last))
                (at, last, waiting) = (at + clip.duration, clip, nil)
            }
        }
        // One reel a file: names alike in their first 8 letters (interview_a, interview_b) get a number.
        var reels: [String: String] = [:]
        for clip in entries.map(\.clip) + entries.compactMap(\.outgoing) where reels[clip.path] == nil {
            let base = reelName(clip.name)
            var reel = base, count = 1
            while reels.values.contains(reel) {
                count += 1
                reel = String(base.prefix(8 - String(count).count)) + String(count)
            }
            if reel != base {
                notes.append(Diagnostic(.notInTimeline, .note, "\(clip.name.quotedForMessage(limit: 60)) is reel \(reel): its name's first 8 letters, \(base), are another file's reel",
                                        remedy: "the FROM CLIP comments name each file"))
            }
            reels[clip.path] = reel
            if let own = timeline.sourceTimecodes[clip.path], own.frameDuration != grid.frame || own.dropFrame != timeline.dropFrame {
                // CMX 3600 counts source timecode at the record rate, in the list's one count (FCM).
                let why = own.frameDuration != grid.frame ? "its file counts \(framesPerSecond(own.frameDuration)) fps and CMX 3600 counts source timecode at the record rate, \(rate) fps"
                    : own.dropFrame ? "its file counts drop-frame and the EDL non-drop, as its other sources do" : "its file counts non-drop and the EDL drop-frame"
                let start = clip.sourceRange.start
                let ownLabel = Timecode.label(frame: FrameGrid(own.frameDuration).nearestFrame(start), frameDuration: own.frameDuration, dropFrame: own.dropFrame)
                notes.append(Diagnostic(.notInTimeline, .warning, "the source timecode of \(clip.name.quotedForMessage(limit: 60)) (reel \(reel)) is not its own: \(timecode(grid.nearestFrame(start))) is written for its \(ownLabel), since \(why)",
                                        remedy: "match the clip by its FROM CLIP comment, or write OTIO or FCPXML, which keep its own times"))
            }
        }
        let (markerPlaces, markersLeftOut) = timeline.markerPlaces(in: entries.map { TimeRange(start: $0.at, duration: $0.clip.duration) },
                                                                   lyingWhere: "where no clip plays (a gap, a title card, after the end)",
                                                                   rule: "an EDL keeps marks on its clips' events only")
        for (number, entry) in entries.enumerated() {
            let clip = entry.clip, reel = reels[clip.path] ?? reelName(clip.name), speed = clip.speed
            let nextIn = number + 1 < entries.count ? entries[number + 1].into?.inOffset ?? .zero : .zero
            let sourceFor = { (offset: MediaTime) in
                clip.sourceRange.start + (speed == 1 ? offset : offset.multiplied(by: clip.sourceRange.duration, dividedBy: clip.duration))
            }
            let end = entry.at + clip.duration - nextIn
            var comments = ["* FROM CLIP NAME: \(clip.name)", "* FROM CLIP: \(path(clip.path))", "* SOURCE FILE: \(path(clip.path))"]
            if let t = entry.into, let outgoing = entry.outgoing {
                // The outgoing clip holds at the transition's start; the incoming one comes in over it.
                let start = entry.at - t.inOffset
                let held = frames(outgoing.sourceRange.end - t.inOffset)
                lines.append(line(number + 1, reels[outgoing.path] ?? reelName(outgoing.name), "C", (held, held), (frames(start), frames(start))))
                let length = frames(t.duration)
                if length > 999 {
                    notes.append(Diagnostic(.notInTimeline, .warning, "the \(t.kind.rawValue) at \(shortSeconds(start)) s lasts \(length) frames: CMX 3600 gives a transition's length 3 digits, so it is written with \(String(length).count), which editors may misread",
                                            remedy: "shorten it to 999 frames or less, or write OTIO or FCPXML", time: start.seconds))
                }
                let kind = (t.kind == .wipe ? "W001 " : "D ") + threeDigits(length)
                lines.append(line(number + 1, reel, kind, (frames(sourceFor(-t.inOffset)), frames(sourceFor(clip.duration - nextIn))), (frames(start), frames(end))))
                comments = ["* FROM CLIP NAME: \(outgoing.name)", "* TO CLIP NAME: \(clip.name)", "* TO CLIP: \(path(clip.path))", "* SOURCE FILE: \(path(clip.path))"]
            } else {
                lines.append(line(number + 1, reel, "C", (frames(clip.sourceRange.start), frames(sourceFor(clip.duration - nextIn))), (frames(entry.at), frames(end))))
            }
            if speed != 1 {
                let shown = (Double(rate) * speed * 10).rounded() / 10
                if shown != Double(rate) * speed { grid.rounded += 1 }
                lines.append("M2   \(pad(reel, 8))       \(pad(shortNumber(shown), 5))    \(timecode(frames(clip.sourceRange.start)))")
            }
            lines += comments
            for (marker, place) in zip(timeline.markers, markerPlaces) where place == number {
                lines.append("* LOC: \(timecode(frames(marker.range.start))) RED     \(marker.name.replacingAll("\n", with: " "))")
            }
        }
        // The clips' own sound (AA/V) is written too, so its volume ramps are as lost as the pictures' ramps.
        for kept in [track] + (withSound ? audioTracks.prefix(1) : []) {
            notes += kept.rampsLeftOut(of: "EDL")
        }
        if let markersLeftOut { notes.append(markersLeftOut) }
        if entries.count > 999 {
            notes.append(Diagnostic(.notInTimeline, .warning, "the EDL has \(entries.count) events: CMX 3600 numbers 999 at most, so events 1000 to \(entries.count) are numbered with 4 digits, which editors may reject",
                                    remedy: "split the edit into EDLs of 999 events or fewer, or write OTIO or FCPXML"))
        }
        if let note = grid.note("EDL", rate: "\(rate)", remedy: "write OTIO for exact times") { notes.append(note) }
        return (lines.joined(separator: "\n") + "\n", notes)
    }

    /// Up to 8 letters and digits of the file's name, as CMX 3600 reels are.
    private static func reelName(_ name: String) -> String {
        let stem = name.split(separator: ".").dropLast().joined(separator: ".")
        let letters = (stem.isEmpty ? name : stem).filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return letters.isEmpty ? "AX" : String(letters.prefix(8)).uppercased()
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private static func threeDigits(_ n: Int64) -> String { n < 10 ? "00\(n)" : n < 100 ? "0\(n)" : "\(n)" }
}
