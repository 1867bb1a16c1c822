import CMoonLua
import MoonreelEngine
import MoonreelInterchange
import MoonreelScriptHost

/// `av.writeTimeline` and `av.readTimeline`: an edit handed to an editor as OpenTimelineIO,
/// FCPXML or a CMX 3600 EDL, and a timeline read back into a composition
/// (docs/interchange.md).
extension API {
    var timelineFunctions: [AVFunction] {
        [
            ("writeTimeline", "av.writeTimeline(comp, vc [, mix], path [, {format=\"otio\"|\"fcpxml\"|\"edl\", name=, cues=, relativePaths=false}]): writes the edit as a timeline an editor opens (DaVinci Resolve, Premiere, Final Cut): clips with their exact source ranges, gaps, dissolves and wipes, speed changes, cues as markers; what the format cannot hold (layers, filters, a slide) is reported, one diagnostic each (docs/interchange.md)", { call in
                try call.api().writeTimeline(call)
            }),
            ("readTimeline", "av.readTimeline(path) → comp, vc, mix, markers: an OpenTimelineIO (.otio) or FCPXML timeline as a composition (its first video track with transitions and the clips' sound, every audio track), ready to export; markers: {name=, start=, duration=, comment=}; what is not read is reported (docs/interchange.md)", { call in
                try call.api().readTimeline(call)
            }),
        ]
    }

    private func writeTimeline(_ call: LuaCall) throws -> Int32 {
        let composition: Composition = try call.object(1, Composition.self)
        let videoComposition: VideoComposition? = try call.optionalObject(2, VideoComposition.self)
        var mix: AudioMix? = nil, pathIndex: Int32 = 3
        if call.type(3) != LUA_TSTRING {
            mix = try call.optionalObject(3, AudioMix.self)
            pathIndex = 4
        }
        let path = try call.filePath(pathIndex)
        var format: TimelineFormat? = nil, name: String? = nil, cues: [Cue] = [], relativePaths = false
        try call.options(pathIndex + 1, [
            "format": { format = try call.choice($0, TimelineFormat.self) },
            "name": { name = try call.string($0) },
            "cues": { cues = try self.cueRecords(call, $0) },
            "relativePaths": { relativePaths = try call.boolean($0) },
        ])
        let title = name ?? TimelineFile.stem(of: path)
        try call.engine {
            let (timeline, notes) = try Timeline.make(name: title, composition: composition, videoComposition: videoComposition, audioMix: mix, cues: cues)
            try TimelineFile.write(timeline, to: path, format: format, relativePaths: relativePaths,
                                   overwrite: policy.overwriteOutputs, readFiles: readFiles) { written in
                for note in notes + written { try policy.report(note, at: call.L) }
            }
        }
        return 0
    }

    private func readTimeline(_ call: LuaCall) throws -> Int32 {
        let path = try call.filePath(1)
        readFiles.record(path)
        let assembly = try call.engine {
            let (timeline, notes) = try TimelineFile.read(path)
            for note in notes { try policy.report(note, at: call.L) }
            let assembly = try TimelineAssembly.make(timeline)
            for note in assembly.notes { try policy.report(note, at: call.L) }
            return assembly
        }
        for track in assembly.composition.tracks {
            for source in Set(track.segments.compactMap { $0.source?.path }) { readFiles.record(source) }
        }
        try call.push(assembly.composition)
        try call.push(assembly.videoComposition)
        try call.push(assembly.audioMix)
        call.pushArray(assembly.markers) { marker in
            call.pushRecord {
                call.push(marker.name); call.setField("name")
                call.push(marker.range.start.seconds); call.setField("start")
                call.push(marker.range.duration.seconds); call.setField("duration")
                call.push(marker.comment); call.setField("comment")
            }
        }
        return 4
    }

    /// Cues as av.readCues gives them: an array of {text=, start=, finish=}.
    private func cueRecords(_ call: LuaCall, _ index: Int32) throws -> [Cue] {
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "array of cues {text=, start=, finish=} (av.readCues)") }
        return try (0..<call.rawLength(index)).map { offset in
            call.pushElement(of: index, offset + 1)
            defer { call.pop() }
            let entry = call.absolute(-1)
            guard call.type(entry) == LUA_TTABLE else { throw call.argumentError(index, "cue \(offset + 1) is not a table {text=, start=, finish=}") }
            let field = { (name: String, read: (Int32) throws -> Void) throws in
                call.pushField(of: entry, name)
                defer { call.pop() }
                try read(call.absolute(-1))
            }
            var text = "", start = MediaTime.zero, finish = MediaTime.zero
            try field("text") { text = try call.string($0) }
            try field("start") { start = try call.time($0, allowNegative: false) }
            try field("finish") { finish = try call.time($0, allowNegative: false) }
            return Cue(text: text, start: start, end: finish)
        }
    }
}

extension Binding {
    static let timeline = Binding(functions: { $0.timelineFunctions })
}
