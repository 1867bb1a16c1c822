import Foundation
import MoonreelEngine
import MoonreelPlatform

/// The folder of a chunked run's pieces, job scripts and logs. Moonreel works only in a
/// folder that is new, empty or marked as one of its own (an earlier, unfinished run of
/// the same command), and once the output is joined removes only the files its tasks make
/// there: whatever else is in it (the output itself, if it was written there) stays.
public struct ChunkFolder: Sendable {
    /// The mark of a folder Moonreel made for a chunked run (its first file, its last removed).
    public static let markName = ".moonreel-chunks"

    /// The folder (absolute).
    public let path: String
    /// How many pieces each export is split into.
    public let pieces: Int
    /// `moonreel-chunks/SCRIPT-KEY`, whose parent Moonreel made too.
    public let isDefault: Bool

    /// A chunk folder as given.
    public init(path: String, pieces: Int, isDefault: Bool) {
        (self.path, self.pieces, self.isDefault) = (path, pieces, isDefault)
    }

    /// Makes the folder, or takes over one that is empty or already Moonreel's; refuses one
    /// that holds anything else.
    public func claim() throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw ChunkFolderError("--chunk-folder \(path.quotedForMessage(limit: 200)) is not a folder") }
            if access(path + "/" + Self.markName, F_OK) != 0, let first = Self.entries(of: path).first {
                throw ChunkFolderError("--chunk-folder \(path.quotedForMessage(limit: 200)) already holds files Moonreel did not make "
                                       + "(\(first.quotedForMessage(limit: 80)), …): give a new or empty folder; Moonreel clears its chunk folder once the output is joined")
            }
        }
        try Paths.makeFolders(path + "/logs")
        do {
            try Paths.writeFile("A chunked render's pieces, job scripts and logs (moonreel run --chunks); moonreel removes them once the output is joined.\n",
                                to: path + "/" + Self.markName, replacing: false)
        } catch let error as SystemError where error.code == EEXIST {}
    }

    /// The files a chunked run's tasks make here: task logs (one per task here, one per array
    /// task and the join's on Slurm) and diagnostics, the job scripts and the join's status.
    /// The pieces and the sound the join removes itself, each export's folder with them.
    public var madeFiles: [String] {
        let tasks = (1...max(pieces, 1)).map { "piece-\($0)" } + ["sound", "join"]
        let logs = tasks.flatMap { [$0 + ".log", $0 + ".diagnostics"] } + (0...max(pieces, 1)).map { "task-\($0).log" }
        return logs.map { "logs/" + $0 } + ["pieces.sh", "join.sh", "join.status"]
    }

    /// Removes what the run made, then each folder it made if that leaves it empty.
    public func removeWhatMoonreelMade() {
        for name in madeFiles { unlink(path + "/" + name) }
        rmdir(path + "/logs")
        for name in Self.entries(of: path) where name.hasPrefix("export-") && name.dropFirst(7).allSatisfy(\.isNumber) { rmdir(path + "/" + name) }
        unlink(path + "/" + Self.markName)
        rmdir(path)
        if isDefault { rmdir(Paths.parent(of: path)) }
    }

    /// The names in `folder`, sorted (none if it cannot be read).
    public static func entries(of folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }
}

/// A chunk folder Moonreel will not work in.
public struct ChunkFolderError: Error, CustomStringConvertible {
    /// Why, for people.
    public let description: String
    init(_ description: String) { self.description = description }
}
