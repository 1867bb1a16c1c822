import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform

/// A chunked render's planning (`moonreel run --chunks`): whether an export can be rendered
/// in pieces, and this task's share of it, laid out alike by every task from the edit.
struct ChunkPlanner {
    let planner: ExportPlanner
    let task: ChunkTask
    private var settings: ExportSettings { planner.settings }
    private var composition: Composition { planner.composition }

    /// Why this export cannot be rendered in pieces, or nil when it can.
    func refusal(strategy: ExportRequest.Strategy, container: OutputContainer, encodings: Encodings) -> String? {
        guard case .reencode = strategy else {
            let preset = planner.preset
            let copier = preset.isPassthrough || preset.isSmartCut ? preset.name : "smartRendering"
            return "\(copier) copies the source's packets, which is already fast"
        }
        guard container.holdsVideoCodecs, encodings.video != nil else { return "\(container.noun) is not a video file that pieces can be joined into" }
        // Matroska keeps no decoding times or frame count, which the packet copy needs.
        guard container != .mkv, container != .webm else { return "pieces cannot be joined into \(container.noun) by copying packets (an .mp4 or .mov can)" }
        guard settings.fileLengthLimit == nil else { return "fileLengthLimit needs the whole file written in order" }
        return nil
    }

    /// Why `layout` has fewer pieces than the run asked: each starts on a keyframe interval
    /// (or a frame), and there are no more of them.
    private func fewerPiecesNote(_ layout: ChunkLayout, outputPath: String, frameCount: Int64) -> Diagnostic {
        let count = layout.pieces.count
        let why = layout.gop > 1
            ? "its \(frameCount) frames make \((frameCount + layout.gop - 1) / layout.gop) keyframe intervals of \(layout.gop) frames (videoSettings.keyframeInterval), and each piece starts on one"
            : "it has \(frameCount) frame\(frameCount == 1 ? "" : "s")"
        return Diagnostic(.encodingChanged, .note, "\(outputPath) is rendered in \(count) piece\(count == 1 ? "" : "s"), not the \(task.pieces) asked: \(why); "
                          + (count + 1 == task.pieces ? "the task of piece \(task.pieces) has" : "the tasks of pieces \(count + 1)…\(task.pieces) have") + " nothing to render")
    }

    /// This task's share of the export: the layout every task computes alike from the edit,
    /// and the piece, sound or join it does.
    func request(outputPath: String, container: OutputContainer, range: TimeRange,
                 preset: ExportPreset, encodings: Encodings) throws -> ExportRequest {
        let planned = ExportRequest(nothing: outputPath, container: container, range: range, preset: preset, encodings: encodings)
        guard let video = try planner.videoPlan(planned).0, let videoEncoding = encodings.video else {
            return planned // refusal let only video through
        }
        let hasSound = try planner.audioPlan(planned) != nil
        let gop = videoEncoding.keyframeInterval.map { Int64(max(1, ($0 / video.frameDuration.seconds).rounded())) } ?? 1
        let key = ChunkTask.key(of: [
            task.runKey, outputPath, container.rawValue, "\(range)", "\(encodings.video.map { "\($0)" } ?? "")",
            "\(encodings.audio.map { "\($0)" } ?? "")", "\(video.outputWidth)x\(video.outputHeight)", "\(video.frameCount)", "\(task.pieces)",
            ChunkLayout.describeFiles(Array(Set((settings.readFiles?.paths ?? []) + composition.sourcePaths))),
        ].joined(separator: "\n"))
        let layout = ChunkLayout(pieces: ChunkLayout.split(frameCount: video.frameCount, into: task.pieces, gop: gop),
                                 frameDuration: video.frameDuration, gop: gop, warmsUp: settings.videoSettings?.deterministic == true,
                                 folder: task.folder, key: key, fileExtension: container.rawValue)
        // Fewer frames (or keyframe intervals) than pieces asked: the run must not say it split
        // the export N ways. Said by the join, and by each piece task left with nothing.
        let fewerPieces = layout.pieces.count < task.pieces ? [fewerPiecesNote(layout, outputPath: outputPath, frameCount: video.frameCount)] : []
        let strategy: ExportRequest.Strategy, path: String, part: String
        switch task.role {
        case .piece(let index):
            guard layout.pieces.indices.contains(index) else {
                return ExportRequest(nothing: outputPath, container: container, range: range, preset: preset, encodings: encodings, notes: fewerPieces)
            }
            let frames = layout.encodedFrames(of: index)
            (strategy, path, part) = (.piece(encoded: frames.encoded, kept: frames.kept), layout.piecePath(index),
                                      "piece \(index + 1) of \(layout.pieces.count)")
        case .sound:
            guard hasSound else { return planned }
            (strategy, path, part) = (.sound, layout.soundPath, "the sound")
        case .join:
            let output = try ExportError.Kind.outputUnavailable.tag {
                try SafeOutput(path: outputPath, overwrite: settings.overwrite, inputs: composition.sourcePaths, readFiles: settings.readFiles)
            }
            return ExportRequest(output: output, container: container, range: range, preset: preset, encodings: encodings,
                                 strategy: .join(layout, hasSound: hasSound), notes: fewerPieces)
        }
        // The output's place is checked by every task, so a wrong path fails before any rendering.
        try ExportError.Kind.outputUnavailable.tag {
            _ = try SafeOutput.checkedLocation(of: outputPath)
            try SafeOutput.checkReplaceable(outputPath, overwrite: settings.overwrite, inputs: composition.sourcePaths, readFiles: settings.readFiles)
        }
        // A part rendered by an earlier run of the same edit is kept (its name says so).
        guard fileSize(path) == nil else {
            return ExportRequest(nothing: outputPath, container: container, range: range, preset: preset, encodings: encodings,
                                 notes: [Diagnostic(.encodingChanged, .note, "\(part) of \(outputPath) is already rendered, kept from an earlier run of the same edit")])
        }
        try ExportError.Kind.outputUnavailable.tag { try Paths.makeFolders(task.folder) }
        let output = try ExportError.Kind.outputUnavailable.tag {
            try SafeOutput(path: path, overwrite: true, inputs: composition.sourcePaths, readFiles: settings.readFiles)
        }
        let partEncodings = Encodings(video: strategy.isSound ? nil : videoEncoding.stitchable,
                                      audio: strategy.isSound ? encodings.audio : nil, dynamicRange: encodings.dynamicRange)
        var request = ExportRequest(output: output, container: container, range: range, preset: preset, encodings: partEncodings, strategy: strategy, notes: [])
        if case .piece(let index) = task.role { request.tags[ChunkLayout.identityTag] = layout.identity(of: index) }
        return request
    }
}
