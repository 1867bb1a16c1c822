import CMoonFFmpeg
#if canImport(Glibc)
import Glibc
#endif
import MoonreelComposition
import MoonreelMedia

/// One process's share of a chunked render (`moonreel run --chunks N`). Every task runs the
/// same script; each of its exports is then split at GOP boundaries into N video pieces that
/// tasks render apart (on one machine or many), its sound is mixed once by a task of its own
/// (so no join can click), and a last task copies the pieces' packets and the sound's into
/// the output, which appears whole or not at all as any export does.
package struct ChunkTask: Sendable {
    package enum Role: Sendable, Equatable {
        /// Renders the pictures of piece `index` (from 0) alone.
        case piece(Int)
        /// Mixes and encodes the whole sound alone.
        case sound
        /// Joins the pieces and the sound into the output.
        case join
    }

    package let role: Role
    /// How many pieces each export is split into.
    package let pieces: Int
    /// The folder that keeps this export's pieces until the join (a filesystem every task sees).
    package let folder: String
    /// What the run was given (script, arguments, parameter values): with the files the
    /// script read, it names the pieces, so pieces of another run are never joined.
    package let runKey: String

    package init(role: Role, pieces: Int, folder: String, runKey: String) {
        (self.role, self.pieces, self.folder, self.runKey) = (role, pieces, folder, runKey)
    }

    /// A short, stable name for `description` (FNV-1a, 64 bits): not a secret, a file name.
    package static func key(of description: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in description.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}

/// Where an export's pieces and sound go, and which frames each piece holds.
struct ChunkLayout {
    /// Output frame numbers of each piece, in order, together covering every frame.
    let pieces: [Range<Int64>]
    let frameDuration: MediaTime
    /// The output's fixed keyframe interval in frames (1: none fixed).
    var gop: Int64 = 1
    /// Whether pieces warm the encoder up (`encodedFrames`): deterministic x264 with fixed keyframes.
    var warmsUp = false
    let folder: String
    /// Names this layout's files: the edit, its encoding and the files it read.
    let key: String
    let fileExtension: String

    /// `frameCount` frames in at most `count` pieces of about equal length, each starting on
    /// a multiple of `gop` frames (the output's fixed keyframe interval, or 1).
    static func split(frameCount: Int64, into count: Int, gop: Int64) -> [Range<Int64>] {
        let unit = max(gop, 1), units = (frameCount + unit - 1) / unit
        let count = Int64(max(1, min(count, Int(clamping: units))))
        let starts = (0..<count).map { index in min(frameCount, (units * index / count) * unit) }
        return zip(starts, starts.dropFirst() + [frameCount]).map { $0..<$1 }.filter { !$0.isEmpty }
    }

    /// The frames piece `index` encodes (its own and a warm-up either side, within the
    /// export) and where its own lie among them. With `warmsUp`, the warm-up's packets are dropped: x264's
    /// rate control then reaches the piece's first frame with the history the single export
    /// had there (it forgets its past slowly), and its lookahead sees past the last frame
    /// (40–60 frames), so the
    /// frames by a seam are the single export's rather than a fresh encoder's (measured: a
    /// fresh piece's second GOP already differs, ~41 dB; 120 frames before still left one GOP
    /// at 44 dB; 150 and more, none). The part before is whole GOPs, so the piece still
    /// starts on a keyframe. Cost: 8 s at 30 fps of extra encoding per middle piece — about
    /// 4 % of a 10-minute render in 4 pieces — which only `deterministic` x264 repays: a
    /// threaded lookahead changes some GOPs from run to run anyway.
    func encodedFrames(of index: Int) -> (encoded: Range<Int64>, kept: Range<Int64>) {
        let own = pieces[index], end = pieces.last?.upperBound ?? own.upperBound
        let (before, after): (Int64, Int64) = warmsUp && gop > 1 ? (180 / gop * gop, 60) : (0, 0)
        let encoded = max(own.lowerBound - before, 0)..<min(own.upperBound + after, end)
        return (encoded, (own.lowerBound - encoded.lowerBound)..<(own.upperBound - encoded.lowerBound))
    }

    /// The tag each piece carries, naming what it holds, which the join checks: a piece
    /// renamed or linked to another's name (same length, so same frame count) is refused.
    static let identityTag = "moonreel_piece"

    /// What piece `index` holds: its place, its frames and the edit.
    func identity(of index: Int) -> String {
        "piece \(index + 1) of \(pieces.count), frames \(pieces[index].lowerBound)-\(pieces[index].upperBound - 1), edit \(key)"
    }

    func piecePath(_ index: Int) -> String { "\(folder)/piece-\(index + 1)-of-\(pieces.count)-\(key).\(fileExtension)" }
    var soundPath: String { "\(folder)/sound-\(key).\(fileExtension)" }

    /// Removes the pieces and the sound once they are in the output, and the folder if that empties it.
    func removeFiles() {
        for index in pieces.indices { unlink(piecePath(index)) }
        unlink(soundPath)
        rmdir(folder)
    }

    /// Says what is missing, if anything, before the join reads a byte.
    func checkComplete(hasSound: Bool) throws {
        var missing = pieces.indices.filter { fileSize(piecePath($0)) == nil }
            .map { "piece \($0 + 1) of \(pieces.count) (frames \(pieces[$0].lowerBound)…\(pieces[$0].upperBound - 1))" }
        if hasSound, fileSize(soundPath) == nil { missing.append("the sound") }
        guard missing.isEmpty else {
            throw ExportError(.renderFailed, "cannot join: \(missing.joined(separator: ", ")) \(missing.count == 1 ? "is" : "are") missing from \(folder) "
                              + "(its task failed, was cancelled or has not run; see its log); run the same command again to render only what is missing")
        }
    }

    /// A composition of the pieces back to back on one video track and the sound (`duration`
    /// of it, the export's) on one audio track, for the packet copy (`PassthroughWriter`). Every piece must hold its
    /// frames and the same codec headers as the first: pieces from another build of the
    /// encoder cannot be spliced into one stream.
    func joinedComposition(hasSound: Bool, duration: MediaTime) throws -> Composition {
        try checkComplete(hasSound: hasSound)
        let joined = Composition()
        let video = try joined.addMutableTrack(mediaType: .video)
        var firstHeader: [UInt8]? = nil
        for (index, frames) in pieces.enumerated() {
            let path = piecePath(index)
            guard let track = try Asset(path: path).tracks(withMediaType: .video).first, track.frameCount == Int(frames.count) else {
                throw ExportError(.renderFailed, "piece \(index + 1) (\(path)) does not hold its \(frames.count) frames; delete it and run again")
            }
            let held = try Demuxer(path: path).tag(Self.identityTag)
            guard held == identity(of: index) else {
                throw ExportError(.renderFailed, "\(path) holds \(held ?? "no piece of this edit") instead of \(identity(of: index)) (a piece renamed or linked?); delete it and run again")
            }
            let header = try codecHeader(of: path, stream: track.streamIndex)
            if let firstHeader, header != firstHeader {
                throw ExportError(.renderFailed, "piece \(index + 1) was encoded with other codec headers than piece 1 (another build of FFmpeg or x264 on that worker?); "
                                  + "every task must run the same moonreel and FFmpeg: delete \(path) and run again")
            }
            firstHeader = firstHeader ?? header
            try video.insertTimeRange(TimeRange(start: .zero, duration: frameDuration * Int64(frames.count)), of: track,
                                      at: frameDuration * frames.lowerBound)
        }
        if hasSound {
            let sound = try Asset(path: soundPath)
            guard let track = sound.tracks(withMediaType: .audio).first else {
                throw ExportError(.renderFailed, "the sound file \(soundPath) holds no audio; delete it and run again")
            }
            try joined.addMutableTrack(mediaType: .audio).insertTimeRange(TimeRange(start: .zero, duration: .min(duration, sound.duration)), of: track, at: .zero)
        }
        return joined
    }

    /// The encoder's stored headers (H.264 SPS/PPS…) of a file's stream.
    private func codecHeader(of path: String, stream: Int) throws -> [UInt8] {
        let demuxer = try Demuxer(path: path)
        guard let parameters = demuxer.stream(stream)?.pointee.codecpar, let bytes = parameters.pointee.extradata else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(parameters.pointee.extradata_size)))
    }

    /// What identifies the files a run read: path, size and modification time of each.
    static func describeFiles(_ paths: [String]) -> String {
        paths.sorted().map { path in
            var info = stat()
            guard stat(path, &info) == 0 else { return path }
            return "\(path):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }.joined(separator: "\n")
    }
}
