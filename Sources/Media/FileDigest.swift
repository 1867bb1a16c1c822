import CMoonFFmpeg
import MoonreelPlatform
#if canImport(Glibc)
import Glibc
#endif

/// What the caches of things Moonreel can make again (analyses, preview proxies) key their
/// entries by: a file's content, so a file changed under the same name is not mistaken for
/// the one cached.
package enum FileDigest {
    /// The SHA-256 of the file's content, in hex.
    package static func sha256(of path: String) throws -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw EngineError("cannot read \(path) (\(systemMessage(errno)))", kind: .io, subject: path) }
        defer { close(descriptor) }
        return try digest { update in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else { throw EngineError("cannot read \(path) (\(systemMessage(errno)))", kind: .io, subject: path) }
                if count == 0 { break }
                update(buffer, count)
            }
        }
    }

    /// The SHA-256 of `bytes`, in hex (an effect package's files and manifest).
    package static func sha256(of bytes: [UInt8]) throws -> String {
        try digest { update in update(bytes, bytes.count) }
    }

    /// Runs FFmpeg's SHA-256 over what `feed` hands its update function.
    private static func digest(_ feed: (_ update: ([UInt8], Int) -> Void) throws -> Void) throws -> String {
        guard let context = av_sha_alloc() else { throw EngineError("out of memory", kind: .limit) }
        defer { av_free(UnsafeMutableRawPointer(context)) }
        av_sha_init(context, 256)
        try feed { bytes, count in av_sha_update(context, bytes, count) }
        var digest = [UInt8](repeating: 0, count: 32)
        av_sha_final(context, &digest)
        return hexString(digest)
    }

    /// `$XDG_CACHE_HOME/moonreel/NAME`, else `~/.cache/moonreel/NAME`; nil with neither set.
    package static func userCacheFolder(_ name: String) -> String? {
        let environment = { (name: String) in getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        guard let base = environment("XDG_CACHE_HOME") ?? environment("HOME").map({ $0 + "/.cache" }) else { return nil }
        return base + "/moonreel/" + name
    }
}
