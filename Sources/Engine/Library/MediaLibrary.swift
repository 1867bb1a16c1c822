#if canImport(Glibc)
import Glibc
#endif
import CMoonAVShim
import MoonreelPlatform
import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia

/// One recording handed to a `MediaLibrary`: where it now lives and what its sidecar says.
public struct LibraryItem: Sendable {
    /// The movie in the library, e.g. "LIB/2026/11/2026-11-24 14.03.22.mp4".
    public let path: String
    /// The JSON sidecar beside it ("… 14.03.22.json").
    public let sidecarPath: String
    /// The recording it was exported from (absolute).
    public let sourcePath: String
    /// The export preset that encoded it.
    public let presetName: String
    /// Seconds of the library copy, as reopened after the export.
    public let duration: Double
    /// When the recording started (Unix seconds): `recordingEnded` minus its duration.
    public let recordingStarted: Double
    /// When the recording ended (Unix seconds): its file's modification time.
    public let recordingEnded: Double
    /// When the export finished (Unix seconds).
    public let exported: Double
    /// "video", "audio": the kinds of streams the copy (and the source) hold.
    public let streams: [String]
    /// Whether the source was deleted (asked for, and still the same file).
    public let sourceDeleted: Bool
    /// Why the source was kept although its deletion was asked for (a read-only folder, say);
    /// nil when it was deleted or not asked. The library copy is complete either way.
    public let sourceDeletionError: String?
    /// Whether a later run finished this hand-off after the one that began it was killed.
    public let recovered: Bool
}

/// A folder that takes finished recordings, like handing a movie to the photo library and
/// deleting it afterwards: each recording is exported with a preset through `ExportSession`,
/// verified (reopened: duration and kinds of streams), moved under a date-based name
/// (`2026/11/2026-11-24 14.03.22.mp4`, then " 2", " 3"… — never over a file) with a JSON
/// sidecar, and only once both are synced is the source deleted.
///
/// Crash safety: every step before the movie becomes visible happens in the hidden folder
/// `.moonreel-import` of the library, under a token `PID-RANDOM` whose lock file the hand-off
/// holds (flock) while it works. A journal (`TOKEN.journal`, signed with the user's library
/// key, written atomically once the copy is verified) is the commit point: opening the
/// library finishes every journaled hand-off whose lock is free (places the movie and
/// sidecar, deletes the source if it is still the same file and the journal is signed) and
/// removes the leftovers of unjournaled ones (their source is untouched). Killed at any
/// moment, a recording is the source, the library copy, or both; a visible library file is
/// always complete. Recovery never follows a symbolic link, removes only files a hand-off
/// names (never outside the hidden folder), and refuses a journal whose paths leave the library.
public final class MediaLibrary {
    /// The library folder.
    public let folder: String
    /// Hand-offs this opening finished for processes that were killed during them.
    public private(set) var recovered: [LibraryItem] = []
    /// Hand-offs this opening could not finish (one line each; their files are kept and the
    /// next opening tries again).
    public private(set) var warnings: [String] = []

    /// The steps of a hand-off, in order: a test sets `MOONREEL_TEST_KILL_AT` to one of these
    /// names and the process kills itself (SIGKILL) when it gets there.
    enum Step: String, CaseIterable {
        case exporting, exported, verified, journalWritten, journaled, moviePlaced, sidecarWritten, sidecarPlaced, sourceDeleted
    }

    /// Opens (or makes) the library folder and finishes or cleans up what killed hand-offs
    /// left (see `recovered`). The folder's parent must exist.
    public init(folder: String) throws {
        guard !folder.isEmpty else { throw EngineError("the library folder name is empty") }
        self.folder = folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        var info = stat()
        if stat(self.folder, &info) != 0 {
            guard errno == ENOENT, mkdir(self.folder, 0o755) == 0 else {
                throw EngineError("library \(folder.quotedForMessage(limit: 200)): cannot make the folder (\(systemMessage(errno))); check that its parent folder exists and is writable", kind: .io, subject: folder)
            }
            try? Paths.sync(folder: Paths.parent(of: self.folder))
        } else if (info.st_mode & S_IFMT) != S_IFDIR {
            throw EngineError("library \(folder.quotedForMessage(limit: 200)) is a file, not a folder; choose a folder", kind: .io, subject: folder)
        }
        guard access(self.folder, W_OK) == 0 else {
            throw EngineError("library \(folder.quotedForMessage(limit: 200)) is not writable; choose a folder you can write to", kind: .io, subject: folder)
        }
        recovered = recover()
    }

    /// Exports `source` with `preset` into the library and, when `deleteSource`, deletes it
    /// once the verified copy and its sidecar are on disk. A source a recovery of this
    /// opening already handed off returns that item. Throws a one-line error naming the
    /// file; on any failure the source is untouched and nothing is visible in the library.
    /// What the export did other than asked (a size rounded, sound left out) goes to
    /// `diagnostics` before the hand-off commits; with `strict`, a warning is the error instead,
    /// so a source is never deleted for a copy that differs from it.
    public func add(recording source: String, preset: ExportPreset, deleteSource: Bool, strict: Bool = false,
                    diagnostics: (Diagnostic) -> Void = { _ in }, cancellation: CancellationFlag? = nil) throws -> LibraryItem {
        let sourcePath = Paths.absolute(source)
        var info = stat()
        guard lstat(sourcePath, &info) == 0 else {
            if let done = recovered.first(where: { $0.sourcePath == sourcePath }) { return done }
            throw EngineError("recording \(source.quotedForMessage(limit: 200)): no such file", kind: .notFound, subject: source)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw EngineError("recording \(source.quotedForMessage(limit: 200)) is not a regular file (a symbolic link or folder); add the movie file itself", subject: source)
        }
        if let inside = realpath(sourcePath, nil), let library = realpath(folder, nil) {
            defer { free(inside); free(library) }
            if String(cString: inside).hasPrefix(String(cString: library) + "/") {
                throw EngineError("recording \(source.quotedForMessage(limit: 200)) is already in the library \(folder.quotedForMessage(limit: 200))", subject: source)
            }
        }
        let asset = try Asset(path: sourcePath)
        let kinds = MediaLibrary.streamKinds(of: asset)
        guard !kinds.isEmpty, asset.duration.value > 0 else {
            throw EngineError("recording \(source.quotedForMessage(limit: 200)) holds no video or audio to add", kind: .decode, subject: source)
        }
        if kinds.contains("video") && (preset.video == nil && !preset.isPassthrough) {
            throw EngineError("preset \(preset.name) drops the video of \(source.quotedForMessage(limit: 200)); use a video preset such as HighestQuality or Passthrough", subject: source)
        }
        guard let staging = try LibraryStaging(library: folder, create: true) else {
            throw EngineError("library \(folder.quotedForMessage(limit: 200)): cannot make its hidden folder \(LibraryStaging.folderName)", kind: .io, subject: folder)
        }
        let lock = try staging.lock(token: LibraryStaging.newToken())
        defer { lock.release() }
        let token = lock.token
        let fileType = preset.video == nil && !kinds.contains("video") ? "m4a" : sourcePath.lowercased().hasSuffix(".mov") ? "mov" : "mp4"
        let staged = "\(staging.path)/\(token).\(fileType)"
        let copy: Asset
        do {
            for found in try export(asset, preset: preset, to: staged, strict: strict, cancellation: cancellation) { diagnostics(found) }
            MediaLibrary.reach(.exported)
            copy = try verify(staged, against: asset, kinds: kinds, source: source)
            MediaLibrary.reach(.verified)
        } catch {
            staging.remove("\(token).\(fileType)")
            throw error
        }
        let ended = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        let stagedInfo = staging.regularFile("\(token).\(fileType)") ?? stat()
        var journal = Journal(
            token: token, fileType: fileType, destination: "", source: sourcePath, preset: preset.name,
            duration: copy.duration.seconds, sourceDuration: asset.duration.seconds,
            started: ended - asset.duration.seconds, ended: ended, exported: MediaLibrary.now(),
            streams: MediaLibrary.streamsJSON(copy), fileSize: Int64(stagedInfo.st_size), deleteSource: deleteSource,
            sourceIdentity: FileIdentity(info), movieIdentity: FileIdentity(stagedInfo))
        do {
            journal.destination = try freeName(for: journal)
            try write(journal, in: staging, step: .journalWritten)
            MediaLibrary.reach(.journaled)
        } catch {
            staging.remove("\(token).\(fileType)")
            staging.remove("\(token).journal.tmp")
            throw EngineError("library \(folder.quotedForMessage(limit: 200)): \(error); \(source.quotedForMessage(limit: 200)) was kept", kind: .io, subject: folder, underlying: error)
        }
        return try complete(journal, in: staging, recovered: false, sourceTrusted: true)
    }

    // MARK: Steps

    /// Exports all of `asset` to `path` with the export machinery (temp file, verify, sync,
    /// rename); what it did other than asked.
    private func export(_ asset: Asset, preset: ExportPreset, to path: String, strict: Bool, cancellation: CancellationFlag?) throws -> [Diagnostic] {
        let composition = Composition()
        do {
            try composition.insertTimeRange(TimeRange(start: .zero, duration: asset.duration), of: asset, at: .zero)
            let session = ExportSession(composition: composition, preset: preset)
            session.outputURL = path
            let recorded = preset.isPassthrough ? nil : MediaLibrary.recordedFrames(asset.path)
            if let recorded {
                let videoComposition = VideoComposition.properties(of: composition)
                videoComposition.frameDuration = recorded.frameDuration
                session.videoComposition = videoComposition
            }
            // The take's frames, no more: its sound often runs a block longer (an AAC
            // encoder's last frame), and its last frame is stretched to meet it (to 37.5 ms
            // at 60 fps: a 120-frame take was copied with 122, the last one thrice).
            if let video = asset.tracks(withMediaType: .video).first, !preset.isPassthrough {
                let frames = recorded.map { $0.frameDuration * Int64($0.count) }
                let end = frames.flatMap { $0.value > 0 && $0 <= video.timeRange.end ? $0 : nil } ?? video.timeRange.end
                if end < asset.duration { session.timeRange = TimeRange(start: .zero, duration: end) }
            }
            session.parentCancellation = cancellation
            session.strict = strict
            var reported = false
            try session.export { _ in
                if !reported { reported = true; MediaLibrary.reach(.exporting) }
            }
            return session.diagnostics
        } catch {
            // The copy's hidden staging name (through /proc/self/fd) means nothing to the user.
            let reason = "\(error)".replacingOccurrences(of: path, with: "the library copy")
            throw EngineError("exporting \(asset.path.quotedForMessage(limit: 200)) for the library failed (\(reason)); the recording was kept", kind: .encode, subject: asset.path, underlying: error)
        }
    }

    /// Reopens the copy: it must hold the source's kinds of streams and its duration
    /// (within 2 %, at least 0.1 s).
    private func verify(_ path: String, against source: Asset, kinds: [String], source name: String) throws -> Asset {
        let kept = "the recording \(name.quotedForMessage(limit: 200)) was kept"
        let copy: Asset
        do { copy = try Asset(path: path) } catch {
            throw EngineError("the library copy of \(name.quotedForMessage(limit: 200)) cannot be reopened (\(error)); \(kept)", kind: .decode, subject: name, underlying: error)
        }
        let tolerance = max(0.1, source.duration.seconds * 0.02)
        guard abs(copy.duration.seconds - source.duration.seconds) <= tolerance else {
            throw EngineError("the library copy of \(name.quotedForMessage(limit: 200)) is \(copy.duration.seconds) s long, the recording \(source.duration.seconds) s; \(kept)", kind: .encode, subject: name)
        }
        let copied = MediaLibrary.streamKinds(of: copy)
        guard copied == kinds else {
            throw EngineError("the library copy of \(name.quotedForMessage(limit: 200)) holds \(copied.joined(separator: " + ")), the recording \(kinds.joined(separator: " + ")); \(kept)", kind: .encode, subject: name)
        }
        return copy
    }

    /// Places the movie and the sidecar, deletes the source, then the journal: the end of
    /// every journaled hand-off, whether `add` runs it or a recovery. `sourceTrusted`: the
    /// journal is this process's own or carries this user's signature; otherwise the source
    /// is never deleted (a journal anyone could have written must not delete a file).
    private func complete(_ start: Journal, in staging: LibraryStaging, recovered: Bool, sourceTrusted: Bool) throws -> LibraryItem {
        var journal = start
        let stagedName = "\(journal.token).\(journal.fileType)"
        let failure = { (why: String) in
            EngineError("library \(self.folder.quotedForMessage(limit: 200)): \(why); the next opening of the library finishes the hand-off of \(journal.source.quotedForMessage(limit: 200))", kind: .io, subject: self.folder)
        }
        if staging.regularFile(stagedName) != nil {
            // Placed under a name nothing has; when one appears meanwhile, the next free one.
            while true {
                let movie = moviePath(journal)
                do {
                    try MediaLibrary.makeFolders(Paths.parent(of: movie))
                    try SafeOutput.moveIntoPlace(staging.path + "/" + stagedName, to: movie)
                    break
                } catch {
                    var taken = stat()
                    guard lstat(movie, &taken) == 0 else { throw failure("\(error)") }
                    journal.destination = try freeName(for: journal)
                    try write(journal, in: staging, step: nil)
                }
            }
            try Paths.sync(folder: Paths.parent(of: moviePath(journal)))
            try staging.sync()
        }
        var placed = stat()
        guard lstat(moviePath(journal), &placed) == 0, FileIdentity(placed).sameFile(as: journal.movieIdentity) else {
            throw failure("the copy of \(journal.source.quotedForMessage(limit: 200)) is neither staged nor at \(moviePath(journal).quotedForMessage(limit: 200))")
        }
        MediaLibrary.reach(.moviePlaced)
        let sidecar = sidecarPath(journal)
        let sidecarTemporary = Paths.parent(of: sidecar) + "/." + Paths.name(of: sidecar) + ".moonreel-" + journal.token + ".tmp"
        var existing = stat()
        if lstat(sidecar, &existing) != 0 {
            unlink(sidecarTemporary) // a killed run's partial one
            do {
                try MediaLibrary.writeDurably(sidecarJSON(journal), to: sidecarTemporary)
                MediaLibrary.reach(.sidecarWritten)
                try SafeOutput.moveIntoPlace(sidecarTemporary, to: sidecar)
                try Paths.sync(folder: Paths.parent(of: sidecar))
            } catch {
                unlink(sidecarTemporary)
                throw failure("cannot write the sidecar (\(error))")
            }
        } else {
            unlink(sidecarTemporary)
        }
        MediaLibrary.reach(.sidecarPlaced)
        var deleted = false
        var deletionError: String?
        if journal.deleteSource {
            var info = stat()
            if !sourceTrusted {
                deletionError = "its journal is not signed with this user's library key (it was written by another user or on another machine), so the source was kept"
            } else if lstat(journal.source, &info) == 0, FileIdentity(info).sameFile(as: journal.sourceIdentity, contents: true) {
                if unlink(journal.source) == 0 {
                    try? Paths.sync(folder: Paths.parent(of: journal.source))
                    deleted = true
                } else {
                    deletionError = systemMessage(errno)
                }
            } else {
                // Gone already (a killed run deleted it), or a different file now has its name.
                deleted = lstat(journal.source, &info) != 0
            }
        }
        MediaLibrary.reach(.sourceDeleted)
        staging.remove(journal.token + ".journal")
        try? staging.sync()
        return LibraryItem(path: moviePath(journal), sidecarPath: sidecar, sourcePath: journal.source, presetName: journal.preset,
                           duration: journal.duration, recordingStarted: journal.started, recordingEnded: journal.ended,
                           exported: journal.exported, streams: journal.streamKinds, sourceDeleted: deleted,
                           sourceDeletionError: deletionError, recovered: recovered)
    }

    /// Finishes the journaled hand-offs whose process is gone (their lock is free) and
    /// removes the files of unjournaled ones. Only files in the hidden folder with a hand-off's
    /// name and a lock file are touched; a journal whose paths leave the library is refused.
    private func recover() -> [LibraryItem] {
        let staging: LibraryStaging
        do {
            guard let opened = try LibraryStaging(library: folder, create: false) else { return [] }
            staging = opened
        } catch {
            warnings.append("\(error)")
            return []
        }
        var files: [String: [String]] = [:]
        for name in staging.names() {
            if let token = LibraryStaging.token(of: name) { files[token, default: []].append(name) }
        }
        var finished: [LibraryItem] = []
        for (token, names) in files.sorted(by: { $0.key < $1.key }) where names.contains(token + ".lock") {
            guard let lock = staging.lockIfAbandoned(token: token) else { continue }
            defer { lock.release() }
            if names.contains(token + ".journal") {
                let text = staging.read(token + ".journal", limit: 1 << 16) ?? ""
                let journal = Journal(text: text)
                if let problem = journal == nil ? "it cannot be read" : journal?.problem(token: token, library: folder) {
                    warnings.append("library \(folder.quotedForMessage(limit: 200)): the journal \(token).journal was refused (\(problem)); nothing it names was touched and its files were kept in \(LibraryStaging.folderName)")
                    continue
                }
                if let journal {
                    var placedInfo = stat()
                    let movieExists = lstat(moviePath(journal), &placedInfo) == 0 && FileIdentity(placedInfo).sameFile(as: journal.movieIdentity)
                    // Neither staged nor placed: someone removed the copy; the source was never
                    // deleted without it, so there is nothing to finish.
                    if movieExists || staging.regularFile("\(token).\(journal.fileType)") != nil {
                        do {
                            let trusted = LibraryKey.current.map { Journal.isSigned(text, key: $0) } ?? false
                            let item = try complete(journal, in: staging, recovered: true, sourceTrusted: trusted)
                            if let reason = item.sourceDeletionError {
                                warnings.append("library \(folder.quotedForMessage(limit: 200)): recovered \(item.path.quotedForMessage(limit: 200)); the source \(item.sourcePath.quotedForMessage(limit: 200)) could not be deleted: \(reason)")
                            }
                            finished.append(item)
                        } catch {
                            warnings.append("\(error)".replacingAll("\n", with: " "))
                            continue
                        }
                    }
                }
            }
            for name in names where name != token + ".lock" { staging.remove(name) }
        }
        if !files.isEmpty { try? staging.sync() }
        return finished
    }

    // MARK: Names and files

    private func moviePath(_ journal: Journal) -> String { folder + "/" + journal.destination + "." + journal.fileType }
    private func sidecarPath(_ journal: Journal) -> String { folder + "/" + journal.destination + ".json" }

    /// "2026/11/2026-11-24 14.03.22" from the recording's start (local time), or the first
    /// of "… 2", "… 3"… for which neither the movie nor the sidecar exists.
    private func freeName(for journal: Journal) throws -> String {
        var seconds = MediaLibrary.wholeSeconds(journal.started)
        var parts = tm()
        localtime_r(&seconds, &parts)
        let base = MediaLibrary.format("%Y/%m/%Y-%m-%d %H.%M.%S", parts)
        for number in 1...10_000 {
            let name = number == 1 ? base : "\(base) \(number)"
            var info = stat()
            if lstat("\(folder)/\(name).\(journal.fileType)", &info) != 0 && lstat("\(folder)/\(name).json", &info) != 0 { return name }
        }
        throw EngineError("library \(folder.quotedForMessage(limit: 200)) has 10000 recordings named \(base.quotedForMessage(limit: 200)) already", kind: .limit, subject: folder)
    }

    /// Writes the journal to a temporary file, syncs it, renames it over the journal and
    /// syncs the folder (a kill leaves the old journal or the new, whole).
    /// The journal is signed with this user's library key (when there is one), so that a
    /// recovery may delete the source it names.
    private func write(_ journal: Journal, in staging: LibraryStaging, step: Step?) throws {
        let path = "\(staging.path)/\(journal.token).journal"
        staging.remove(journal.token + ".journal.tmp")  // one a killed rewrite left (only this hand-off writes it)
        try MediaLibrary.writeDurably(journal.signedText(key: LibraryKey.current), to: path + ".tmp")
        if let step { MediaLibrary.reach(step) }
        guard rename(path + ".tmp", path) == 0 else {
            throw EngineError("cannot write the journal in \(staging.displayPath.quotedForMessage(limit: 200)) (\(systemMessage(errno)))", kind: .io, subject: staging.displayPath)
        }
        try staging.sync()
    }

    /// The sidecar: what was recorded, how it was exported, and when.
    private func sidecarJSON(_ journal: Journal) -> String {
        """
        {
          "file": \(jsonQuoted(Paths.name(of: moviePath(journal)))),
          "source": \(jsonQuoted(journal.source)),
          "preset": \(jsonQuoted(journal.preset)),
          "recordingStarted": \(jsonQuoted(MediaLibrary.iso8601(journal.started))),
          "recordingEnded": \(jsonQuoted(MediaLibrary.iso8601(journal.ended))),
          "exported": \(jsonQuoted(MediaLibrary.iso8601(journal.exported))),
          "duration": \(journal.duration),
          "sourceDuration": \(journal.sourceDuration),
          "fileSize": \(journal.fileSize),
          "streams": \(journal.streams),
          "deleteSource": \(journal.deleteSource)
        }

        """
    }

    /// At `MOONREEL_TEST_KILL_AT=STEP` the process SIGKILLs itself; at `STEP:INT` it sends
    /// itself a Ctrl-C (SIGINT) and gives the signal thread a moment to take it.
    static func reach(_ step: Step) {
        guard let testStep, testStep.hasPrefix(step.rawValue) else { return }
        if testStep == step.rawValue { kill(getpid(), SIGKILL) }
        if testStep == step.rawValue + ":INT" {
            kill(getpid(), SIGINT)
            usleep(300_000)
        }
    }

    /// Read once: only hand-off code looks at it.
    private static let testStep: String? = getenv("MOONREEL_TEST_KILL_AT").map { String(cString: $0) }

    /// The rate the recording's pictures were taken at (its video stream's r_frame_rate):
    /// the average rate of a recording is skewed by where its first picture starts, and an
    /// export at that rate would snap 60 fps to 59.94; and how many pictures it holds. Nil
    /// without video or a sane rate.
    static func recordedFrames(_ path: String) -> (frameDuration: MediaTime, count: Int)? {
        guard let demuxer = try? Demuxer(path: path) else { return nil }
        for index in 0..<demuxer.streamCount {
            guard let stream = demuxer.stream(index), stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO else { continue }
            let rate = stream.pointee.r_frame_rate
            guard let frameDuration = rate.frameDuration, Double(rate.num) / Double(rate.den) <= 1000 else { return nil }
            // A recording is written in fragments, which state no frame count: its packets are counted.
            var count = 0
            try? demuxer.forEachPacket { packet in
                if packet.pointee.stream_index == Int32(index) { count += 1 }
                return true
            }
            return (frameDuration, count)
        }
        return nil
    }

    static func streamKinds(of asset: Asset) -> [String] {
        ["video", "audio"].filter { kind in asset.tracks.contains { $0.mediaType.rawValue == kind } }
    }

    static func streamsJSON(_ asset: Asset) -> String {
        let streams = asset.tracks.compactMap { track -> String? in
            switch track.mediaType {
            case .video:
                return "{ \"type\": \"video\", \"codec\": \(jsonQuoted(track.codec)), \"width\": \(Int(track.naturalSize.width)), \"height\": \(Int(track.naturalSize.height)), \"frameRate\": \(track.nominalFrameRate) }"
            case .audio:
                return "{ \"type\": \"audio\", \"codec\": \(jsonQuoted(track.codec)), \"sampleRate\": \(track.sampleRate), \"channels\": \(track.channelCount) }"
            default:
                return nil
            }
        }
        return "[" + streams.joined(separator: ", ") + "]"
    }

    /// Writes `text` to a new file at `path` and syncs it (an existing file is an error).
    /// Makes the folders of a library name (durably), as one-line engine errors.
    static func makeFolders(_ path: String) throws {
        do { try Paths.makeFolders(path, durably: true) } catch { throw EngineError("\(error)", kind: .io, subject: path) }
    }

    static func writeDurably(_ text: String, to path: String) throws {
        try writeDurably(Array(text.utf8), to: path, mode: 0o644)
    }

    /// Writes `bytes` to a new file at `path` with `mode` (never through a link) and syncs
    /// it; on failure the file is removed.
    static func writeDurably(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw EngineError("cannot create \(path.quotedForMessage(limit: 200)) (\(systemMessage(errno)))", kind: .io, subject: path) }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                unlink(path)
                throw EngineError("cannot write \(path.quotedForMessage(limit: 200)) (\(systemMessage(errno)))", kind: .io, subject: path)
            }
            offset += written
        }
        guard fsync(descriptor) == 0 else {
            unlink(path)
            throw EngineError("cannot sync \(path.quotedForMessage(limit: 200)) to disk (\(systemMessage(errno)))", kind: .io, subject: path)
        }
    }

    /// Unix seconds as time_t (0 for a value a damaged journal could hold: NaN, ±inf, huge).
    static func wholeSeconds(_ seconds: Double) -> time_t {
        seconds.isFinite && abs(seconds) < 1e15 ? time_t(seconds.rounded(.down)) : 0
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func format(_ pattern: String, _ parts: tm) -> String {
        var copy = parts
        var buffer = [CChar](repeating: 0, count: 128)
        let count = strftime(&buffer, buffer.count, pattern, &copy)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Local time with its offset, e.g. "2026-11-24T14:03:22+01:00".
    static func iso8601(_ seconds: Double) -> String {
        var whole = wholeSeconds(seconds)
        var parts = tm()
        localtime_r(&whole, &parts)
        let offset = parts.tm_gmtoff / 60
        let sign = offset < 0 ? "-" : "+"
        let hours = abs(offset) / 60, minutes = abs(offset) % 60
        return format("%Y-%m-%dT%H:%M:%S", parts) + sign + (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }
}

/// What a hand-off has settled once its copy is verified, kept in the library's hidden
/// folder as lines of "key=value" (values with %, CR and LF escaped as %25, %0D, %0A).
struct Journal {
    var token: String
    var fileType: String
    /// The name in the library without extension, e.g. "2026/11/2026-11-24 14.03.22".
    var destination: String
    var source: String
    var preset: String
    var duration: Double
    var sourceDuration: Double
    var started: Double
    var ended: Double
    var exported: Double
    /// The sidecar's "streams" array, as JSON.
    var streams: String
    var fileSize: Int64
    var deleteSource: Bool
    var sourceIdentity: FileIdentity
    var movieIdentity: FileIdentity

    init(token: String, fileType: String, destination: String, source: String, preset: String, duration: Double,
         sourceDuration: Double, started: Double, ended: Double, exported: Double, streams: String, fileSize: Int64,
         deleteSource: Bool, sourceIdentity: FileIdentity, movieIdentity: FileIdentity) {
        (self.token, self.fileType, self.destination, self.source, self.preset) = (token, fileType, destination, source, preset)
        (self.duration, self.sourceDuration, self.started, self.ended, self.exported) = (duration, sourceDuration, started, ended, exported)
        (self.streams, self.fileSize, self.deleteSource) = (streams, fileSize, deleteSource)
        (self.sourceIdentity, self.movieIdentity) = (sourceIdentity, movieIdentity)
    }

    var streamKinds: [String] { ["video", "audio"].filter { streams.contains("\"type\": \"\($0)\"") } }

    var text: String {
        let fields: [(String, String)] = [
            ("version", "2"), ("token", token), ("fileType", fileType), ("destination", destination), ("source", source),
            ("preset", preset), ("duration", "\(duration)"), ("sourceDuration", "\(sourceDuration)"), ("started", "\(started)"),
            ("ended", "\(ended)"), ("exported", "\(exported)"), ("streams", streams), ("fileSize", "\(fileSize)"),
            ("deleteSource", deleteSource ? "1" : "0"), ("sourceIdentity", sourceIdentity.text), ("movieIdentity", movieIdentity.text),
        ]
        return fields.map { "\($0.0)=\(Journal.escape($0.1))\n" }.joined()
    }

    /// Reads a journal; nil when it is not one (a journal is renamed into place whole, so
    /// this means someone else's file).
    init?(text: String) {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = Journal.unescape(line[line.index(after: equals)...])
        }
        guard fields["version"] == "2", let token = fields["token"], let fileType = fields["fileType"],
              let destination = fields["destination"], !destination.isEmpty, let source = fields["source"] else { return nil }
        func number(_ key: String) -> Double { fields[key].flatMap { Double($0) } ?? 0 }
        self.init(token: token, fileType: fileType, destination: destination, source: source, preset: fields["preset"] ?? "",
                  duration: number("duration"), sourceDuration: number("sourceDuration"), started: number("started"),
                  ended: number("ended"), exported: number("exported"), streams: fields["streams"] ?? "[]",
                  fileSize: fields["fileSize"].flatMap { Int64($0) } ?? 0, deleteSource: fields["deleteSource"] == "1",
                  sourceIdentity: FileIdentity(text: fields["sourceIdentity"] ?? ""), movieIdentity: FileIdentity(text: fields["movieIdentity"] ?? ""))
    }

    /// The journal's text with its signature line under `key` (none without a key).
    func signedText(key: [UInt8]?) -> String {
        guard let key, let signature = LibraryKey.signature(of: text, key: key) else { return text }
        return text + "signature=\(signature)\n"
    }

    /// Whether `text` ends with a signature line that is its body's under `key`.
    static func isSigned(_ text: String, key: [UInt8]) -> Bool {
        guard text.hasSuffix("\n"), let start = text.dropLast().lastIndex(of: "\n").map({ text.index(after: $0) }),
              text[start...].hasPrefix("signature=") else { return false }
        let signature = text[start...].dropFirst("signature=".count).dropLast()
        return LibraryKey.verify(String(text[..<start]), signature: String(signature), key: key)
    }

    /// A name in the library: "2026/11/2026-11-24 14.03.22", then " 2", " 3"…
    private static func isLibraryName(_ name: String) -> Bool {
        let shape = Array("dddd/dd/dddd-dd-dd dd.dd.dd")
        let characters = Array(name)
        guard characters.count >= shape.count else { return false }
        for (character, expected) in zip(characters, shape) {
            guard expected == "d" ? character.isASCIIDigit : character == expected else { return false }
        }
        let number = characters.dropFirst(shape.count)
        return number.isEmpty || number.first == " " && (2...6).contains(number.count) && number.dropFirst().allSatisfy(\.isASCIIDigit)
    }

    /// Why a journal read back from the hidden folder must not be acted on, or nil: every
    /// path it names must be one a hand-off of this library writes — the movie and sidecar
    /// under a library name inside it, the staged copy a known file type, the source an
    /// absolute path outside the library without "." or ".." parts.
    func problem(token expected: String, library: String) -> String? {
        guard token == expected else { return "it names the token \(token.quotedForMessage(limit: 40)), not its own" }
        guard LibraryStaging.fileTypes.contains(fileType) else {
            return "file type \(fileType.quotedForMessage(limit: 40)) is not one of \(LibraryStaging.fileTypes.joined(separator: ", "))"
        }
        guard Journal.isLibraryName(destination) else { return "destination \(destination.quotedForMessage(limit: 80)) is not a library name" }
        let parts = source.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard source.hasPrefix("/"), !parts.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }), !source.utf8.contains(0) else {
            return "source \(source.quotedForMessage(limit: 80)) is not an absolute path without \".\" or \"..\" parts"
        }
        if let real = realpath(library, nil) {
            defer { free(real) }
            let root = String(cString: real)
            let parentOfSource = realpath(Paths.parent(of: source), nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            }
            if let parentOfSource, parentOfSource == root || parentOfSource.hasPrefix(root + "/") {
                return "source \(source.quotedForMessage(limit: 80)) is inside the library"
            }
        }
        return nil
    }

    static func escape(_ value: String) -> String {
        value.replacingAll("%", with: "%25").replacingAll("\r", with: "%0D").replacingAll("\n", with: "%0A")
    }

    static func unescape(_ value: Substring) -> String {
        String(value).replacingAll("%0A", with: "\n").replacingAll("%0D", with: "\r").replacingAll("%25", with: "%")
    }
}

/// `text` as a JSON string literal (quotes, backslashes and control characters escaped).
public func jsonQuoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}
