import CMoonFFmpeg
import CMoonAVShim
import MoonreelPlatform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import MoonreelComposition
import MoonreelMedia
import MoonreelRender

/// Preview proxies, as editors make them (Resolve's optimized media, Premiere's and Final
/// Cut's proxies): for a video stream too large or too sparsely keyed to scrub, a small copy
/// with a keyframe every half second, holding every frame of the source at its exact time
/// (so a preview reading it shows the same frame at every time), HDR tone-mapped as
/// previews show it. Kept in a folder, named by
/// the source's content like the analysis cache: a changed source gets a proxy of its own,
/// and one that no longer matches its check (deleted, cut short, rewritten) is made again.
/// Previews read them; an export never does.
public final class ProxyCache: Sendable {
    /// Where the proxies are kept (made on first use, readable by the user alone).
    public let folder: String
    /// A proxy's picture, upright, fits inside this box: twice the preview's, which the studio
    /// composes proxies at. At the preview's size itself, its 4:2:0 colour at half that lost
    /// detail the preview shows (33 dB against the source's picture on a 1080p test pattern,
    /// 37 on the HLG iPhone fixture; issue 41, ProxyTests). Upright, so a portrait phone clip
    /// in a landscape preview is not decoded at three times the pixels it is shown with (4K60
    /// portrait from its 1080×606 proxy: 6.8 ms a frame in the studio; the same pictures
    /// landscape from a 1920×1080 one: 16 ms).
    public let width: Int, height: Int

    /// Bumped whenever proxies are made differently, so old ones are made again (3:
    /// interlaced sources are made whole; 4: an MPEG-TS file's times count from its media).
    static let version = 4
    /// A keyframe every half second: a scrub decodes at most 15 frames at 30 fps (1080p from
    /// its proxy: 69 ms at the 95th percentile to the page, bench/RESULTS.md).
    static let keyframeSeconds = 0.5
    /// Sources with keyframes further apart than this are proxied even when small: scrubbing
    /// them decodes up to this long a run of frames (a 10-second GOP at 1080p: 864 ms p95).
    static let sparseKeyframeSeconds = 2.0
    /// x264 at CRF 10, no B-frames: studio frames from the proxy of the HLG iPhone fixture are
    /// ≥ 38 dB against its export (CRF 16: 37).
    static let quality = 10

    /// Each source's content digest, kept while the file is unchanged (hashing a phone's 4K
    /// video takes a second; the studio asks after every run of the script).
    private let digests = Mutex<[String: (file: FileIdentity, digest: String)]>([:])
    /// Each proxy found whole, as the file was then: found again unchanged, it is not hashed
    /// again (the studio looks after every save, and an hour of 1080p is a 13 GB proxy).
    private let verified = Mutex<[String: FileIdentity]>([:])

    /// The most bytes the folder's proxies may take: `prune`, after a proxy is made, removes
    /// the least recently used others until they fit (a proxy of 1080p takes about 4 MB a second).
    public let byteLimit: Int64
    /// 20 GiB: about an hour and a half of 1080p proxies.
    public static let defaultByteLimit: Int64 = 20 << 30

    /// A cache in `folder` for previews that fit inside `previewSize`, its proxies within `byteLimit`.
    public init(folder: String, previewSize: (width: Int, height: Int) = (960, 540), byteLimit: Int64 = ProxyCache.defaultByteLimit) {
        self.folder = folder
        width = max(2, previewSize.width * 2)
        height = max(2, previewSize.height * 2)
        self.byteLimit = byteLimit
    }

    /// `$XDG_CACHE_HOME/moonreel/proxies`, else `~/.cache/moonreel/proxies`; nil with neither set.
    public static func standard(previewSize: (width: Int, height: Int) = (960, 540), byteLimit: Int64 = defaultByteLimit) -> ProxyCache? {
        FileDigest.userCacheFolder("proxies").map { ProxyCache(folder: $0, previewSize: previewSize, byteLimit: byteLimit) }
    }

    /// Whether a preview of a track gains from a proxy, and why.
    public enum Need: Sendable, Equatable {
        /// A proxy makes its preview smoother; `reason` says what about the source (its size,
        /// its keyframes, its cost to decode).
        case needed(reason: String)
        /// The source previews as well as a proxy would; `reason` says why.
        case notNeeded(reason: String)
    }

    /// Whether `track` gains from a proxy: a video stream larger than the box, one with
    /// keyframes more than two seconds apart, or one larger than the preview that is costly
    /// to decode (other than 8-bit H.264 up to 30 fps: a phone's HEVC 10-bit or 1080p60).
    public func need(of track: AssetTrack) -> Need {
        guard track.mediaType == .video, !track.isStillImage else { return .notNeeded(reason: "not a moving picture") }
        let (width, height) = (Int(track.naturalSize.width), Int(track.naturalSize.height))
        let turned = Self.isTurned(track)
        let size = proxySize(width: width, height: height, turned: turned)
        let upright = turned ? (width: height, height: width) : (width: width, height: height)
        if upright.width > self.width || upright.height > self.height {
            return .needed(reason: "\(width)×\(height) is larger than the \(size.width)×\(size.height) proxy")
        }
        let gap = Self.longestKeyframeGap(path: track.path, streamIndex: track.streamIndex)
        if let gap, gap > Self.sparseKeyframeSeconds {
            return .needed(reason: "keyframes up to \(shortNumber(gap)) s apart")
        }
        let largerThanPreview = upright.width > self.width / 2 || upright.height > self.height / 2
        let costly = [track.codec == "h264" ? nil : track.codec.uppercased(), track.bitsPerComponent > 8 ? "\(track.bitsPerComponent)-bit" : nil,
                      track.nominalFrameRate > 31 ? "\(shortNumber(track.nominalFrameRate)) fps" : nil].compactMap { $0 }
        if largerThanPreview, !costly.isEmpty {
            return .needed(reason: "\(width)×\(height) \(costly.joined(separator: " ")) is costly to decode")
        }
        // Without an index listing the keyframes (WebM, MPEG-TS) their spacing is not known: said so.
        let keyframes = gap == nil ? "keyframes not listed by the file" : "keyframes at most \(shortNumber(Self.sparseKeyframeSeconds)) s apart"
        return .notNeeded(reason: "\(width)×\(height) \(track.codec) with \(keyframes)")
    }

    /// Whether the track is shown a quarter turned from how it is stored (portrait phone video).
    static func isTurned(_ track: AssetTrack) -> Bool { abs(track.preferredTransform.b) > 0.5 }

    /// The stored size of a proxy of a `width`×`height` stream (`turned`: shown a quarter
    /// turned): upright, it fits in the box; even.
    func proxySize(width: Int, height: Int, turned: Bool) -> (width: Int, height: Int) {
        let upright = turned ? (height, width) : (width, height)
        let fit = min(1, Double(self.width) / Double(max(upright.0, 1)), Double(self.height) / Double(max(upright.1, 1)))
        let even = { (value: Int) in max(2, Int((Double(value) * fit / 2).rounded(.down)) * 2) }
        return (even(width), even(height))
    }

    /// The longest run between keyframes the container's index lists (MP4 and MOV list
    /// every frame), in seconds; nil when it lists too few to say.
    static func longestKeyframeGap(path: String, streamIndex: Int) -> Double? {
        guard let demuxer = try? Demuxer(path: path), let stream = demuxer.stream(streamIndex) else { return nil }
        let count = avformat_index_get_entries_count(stream)
        var (previous, longest, keyframes): (Int64?, Int64, Int) = (nil, 0, 0)
        for index in 0..<count {
            guard let entry = avformat_index_get_entry(stream, index), entry.pointee.flags & AVINDEX_KEYFRAME != 0 else { continue }
            if let previous { longest = max(longest, entry.pointee.timestamp - previous) }
            previous = entry.pointee.timestamp
            keyframes += 1
        }
        // The stretch after the last keyframe counts too (a file with one keyframe).
        if let previous, count > 0, let last = avformat_index_get_entry(stream, count - 1) {
            longest = max(longest, last.pointee.timestamp - previous)
        }
        guard keyframes > 0, count > keyframes else { return nil }
        return Double(longest) * av_q2d(stream.pointee.time_base)
    }

    // MARK: Kept proxies

    /// Where the proxy of `source` is kept, and its check beside it.
    public func path(of source: ProxyFiles.Source) throws -> String {
        "\(folder)/\(try digest(of: source.path))-\(source.streamIndex)-\(width)x\(height)-v\(Self.version).mov"
    }

    private func checkPath(of proxy: String) -> String { proxy + ".check" }

    /// The kept proxy of `source` when it is whole (its size and SHA-256 are those written
    /// when it was made); nil when there is none. One that fails its check is removed.
    public func existing(_ source: ProxyFiles.Source) throws -> String? {
        let proxy = try path(of: source)
        guard let check = try? TextFile.read(checkPath(of: proxy), kind: "proxy check") else {
            unlink(proxy)
            return nil
        }
        let file = FileIdentity(path: proxy)
        let unchanged = file.map { file in verified.withLock { $0[proxy]?.sameFile(as: file, contents: true) ?? false } } ?? false
        guard unchanged || check == (try? Self.check(of: proxy)) else {
            verified.withLock { $0[proxy] = nil }
            unlink(proxy)
            unlink(checkPath(of: proxy))
            return nil
        }
        if let file { verified.withLock { $0[proxy] = file } }
        // Used now: the last to go when the folder is over its limit.
        utimes(checkPath(of: proxy), nil)
        return proxy
    }

    /// Removes the least recently used proxies (their check file's time: made or last found)
    /// other than those `keeping` (the ones a run uses) until the folder's proxies fit in
    /// `byteLimit`; returns how many went and their bytes, and the bytes still over the limit
    /// (the kept ones alone passing it). A proxy open in a preview stays readable until it is closed.
    @discardableResult
    public func prune(keeping: Set<String> = []) -> (count: Int, bytes: Int64, over: Int64) {
        var proxies: [(path: String, bytes: Int64, used: Int)] = Paths.names(in: folder).filter { $0.hasSuffix(".mov") && !$0.hasPrefix(".") }.compactMap { name in
            let path = folder + "/" + name
            var info = stat()
            guard let bytes = fileSize(path), stat(checkPath(of: path), &info) == 0 else { return (path, fileSize(path) ?? 0, 0) }
            return (path, bytes, info.st_mtim.tv_sec)
        }
        var total = proxies.reduce(0) { $0 + $1.bytes }
        var removed = (count: 0, bytes: Int64(0))
        proxies.sort { $0.used < $1.used }
        for proxy in proxies where total > byteLimit && !keeping.contains(proxy.path) {
            unlink(checkPath(of: proxy.path))
            guard unlink(proxy.path) == 0 else { continue }
            total -= proxy.bytes
            removed = (removed.count + 1, removed.bytes + proxy.bytes)
        }
        return (removed.count, removed.bytes, max(0, total - byteLimit))
    }

    /// What a proxy's check file says: its format, size and SHA-256.
    private static func check(of proxy: String) throws -> String {
        guard let size = fileSize(proxy) else { throw EngineError("no proxy at \(proxy)", kind: .notFound, subject: proxy) }
        return "moonreel proxy v\(version)\nbytes \(size)\nsha256 \(try FileDigest.sha256(of: proxy))\n"
    }

    private func digest(of path: String) throws -> String {
        guard let file = FileIdentity(path: path) else { return try FileDigest.sha256(of: path) }
        if let known = digests.withLock({ $0[path] }), known.file.sameFile(as: file, contents: true) { return known.digest }
        let digest = try FileDigest.sha256(of: path)
        // Kept only if the file is still the one hashed.
        if let now = FileIdentity(path: path), now.sameFile(as: file, contents: true) {
            digests.withLock { $0[path] = (file, digest) }
        }
        return digest
    }

    // MARK: Making one

    /// The proxy of `source`: the kept one, or one made now (`progress` is told the part
    /// done, 0…1). Written to a temporary file in the folder, read back to check that every
    /// frame kept its time, then put in place with its check.
    /// - Throws: `EngineError` when the source cannot be decoded or the proxy not written
    ///   (`.cancelled` once `cancellation` is set).
    @discardableResult
    public func make(_ source: ProxyFiles.Source, progress: (Double) -> Void = { _ in },
                     cancellation: CancellationFlag? = nil) throws -> String {
        if let kept = try existing(source) { return kept }
        let proxy = try path(of: source)
        let hashed = FileIdentity(path: source.path)
        do {
            try Paths.makeFolders(folder, mode: 0o700)
        } catch {
            throw EngineError("cannot make the proxy folder \(folder): \(error)", kind: .io, subject: folder, underlying: error)
        }
        let temporary = "\(folder)/.\(Paths.name(of: proxy)).\(getpid())-\(UInt64.random(in: 0...UInt64.max)).tmp"
        defer { unlink(temporary) }
        let times = try write(source, to: temporary, progress: progress, cancellation: cancellation)
        try Self.checkTimes(of: temporary, are: times, source: source.path)
        // A source replaced while it was read: the copy may be of either file.
        guard let hashed, let now = FileIdentity(path: source.path), now.sameFile(as: hashed, contents: true) else {
            throw EngineError("\(source.path) changed while its proxy was made; make it again", kind: .io, subject: source.path)
        }
        let check = try Self.check(of: temporary)
        guard rename(temporary, proxy) == 0 else {
            throw EngineError("cannot put the proxy in place at \(proxy) (\(systemMessage(errno)))", kind: .io, subject: proxy)
        }
        do {
            try Paths.writeFile(check, to: checkPath(of: proxy), replacing: true)
        } catch {
            throw EngineError("cannot write the proxy's check \(checkPath(of: proxy)): \(error)", kind: .io, subject: proxy, underlying: error)
        }
        progress(1)
        return proxy
    }

    /// Decodes `source`, scales each frame into the box and encodes it with its own pts;
    /// returns the times written.
    private func write(_ source: ProxyFiles.Source, to path: String, progress: (Double) -> Void,
                       cancellation: CancellationFlag?) throws -> [MediaTime] {
        let turned = try Asset(path: source.path).tracks.first { $0.streamIndex == source.streamIndex }.map(Self.isTurned) ?? false
        let reader = try StreamReader(path: source.path, streamIndex: source.streamIndex)
        guard let stream = reader.demuxer.stream(source.streamIndex), stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO else {
            throw EngineError("\(source.path) has no video stream #\(source.streamIndex) to make a proxy of", kind: .notFound, subject: source.path)
        }
        let timeBase = reader.timeBase
        let start = reader.demuxer.startTime(ofStream: source.streamIndex)?.pts(in: timeBase) ?? 0
        let length = stream.pointee.duration > 0 ? Double(stream.pointee.duration) * av_q2d(timeBase)
            : Double(max(reader.demuxer.context.pointee.duration, 0)) / Double(AV_TIME_BASE)
        let rate = stream.pointee.avg_frame_rate.isValid ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let frameDuration = rate.frameDuration ?? MediaTime(value: 1, timescale: 30)
        let muxer = try Muxer(path: path, container: .mov)
        let scaler = Scaler(flags: SWS_BICUBIC | SWS_ACCURATE_RND)
        // Previews are SDR: HDR is tone-mapped here once, as the compositor would at every
        // frame shown (its conversion, at the source's size, before the picture is scaled).
        // That conversion was most of a 10-bit HLG iPhone frame's 54 ms in the studio.
        let toneMapper = ColorConverter(to: .sdr)
        var encoder: StreamEncoder?
        var written: [Int64] = []
        // Interlaced sources are previewed as they are drawn: whole.
        let deinterlacer = Deinterlacer()
        while let frame = try deinterlacer.nextFrame(from: reader) {
            if cancellation?.isCancelled == true { throw EngineError("making the proxy of \(source.path) was cancelled", kind: .cancelled) }
            let pts = reader.pts(of: frame)
            // A repeated or backward time (broken files) cannot be encoded; a preview of the
            // source shows the later frame at it, as the proxy then does.
            guard written.last.map({ pts > $0 }) ?? true else { continue }
            let picture = ColorConverter.needed(from: .of(frame), to: .sdr) ? try toneMapper.convert(frame) : frame
            let color = ColorDescription.of(picture)
            let tenBit = (av_pix_fmt_desc_get(picture.pixelFormat)?.pointee.comp.0.depth ?? 8) > 8
            let format = tenBit ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P
            let size = proxySize(width: picture.width, height: picture.height, turned: turned)
            if encoder == nil {
                let encoding = VideoEncoding(codec: .h264, encoderName: "libx264", pixelFormat: format, rateControl: .quality(crf: Self.quality),
                                             profile: nil, options: [("preset", "ultrafast"), ("bf", "0")],
                                             keyframeInterval: Self.keyframeSeconds, codecTag: nil)
                encoder = try StreamEncoder.video(encoding, width: size.width, height: size.height, frameDuration: frameDuration,
                                                  color: color, muxer: muxer, timeBase: timeBase)
                try muxer.writeHeader(metadata: [:], fastStart: false)
            }
            // A source already in the box (1080p with far keyframes) is encoded as decoded.
            let scaled = picture.width == size.width && picture.height == size.height && picture.pixelFormat == format ? picture
                : try scaler.convert(picture, width: size.width, height: size.height, format: format, sourceColor: color, outputColor: color)
            scaled.pointer.pointee.pts = pts
            try encoder?.encode(scaled)
            written.append(pts)
            if length > 0 { progress(min(0.99, max(0, Double(pts - start) * av_q2d(timeBase) / length))) }
        }
        guard let encoder else { throw EngineError("\(source.path) has no video frame to make a proxy of", kind: .decode, subject: source.path) }
        try encoder.encode(nil)
        try muxer.finish()
        return written.map { MediaTime(pts: $0, timeBase: timeBase) }
    }

    /// Reads the proxy's packets back: every frame written, at its exact time.
    private static func checkTimes(of proxy: String, are times: [MediaTime], source: String) throws {
        let demuxer = try Demuxer(path: proxy)
        var read: [MediaTime] = []
        if let stream = demuxer.stream(0) {
            let timeBase = stream.pointee.time_base
            try demuxer.forEachPacket { packet in
                read.append(MediaTime(pts: packet.pointee.pts, timeBase: timeBase))
                return true
            }
        }
        guard read.sorted() == times else {
            throw EngineError("the proxy of \(source) does not keep its frame times (\(read.count) of \(times.count) frames read back)",
                              kind: .encode, subject: source)
        }
    }
}
