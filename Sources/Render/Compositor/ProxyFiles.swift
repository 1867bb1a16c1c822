import MoonreelComposition

/// Preview copies a compositor reads in place of their sources (`ProxyCache` makes them): a
/// copy holds the source's frames at their exact times, stored smaller, and the renderer
/// scales each back to the source's stored size, so every transform keeps its meaning.
/// Previews use them; an export never does.
public struct ProxyFiles: Sendable, Equatable {
    /// One video stream of one file.
    public struct Source: Hashable, Sendable {
        /// The media file, as the asset was opened.
        public let path: String
        /// The stream's index in it.
        public let streamIndex: Int
        /// Stream `streamIndex` of `path`.
        public init(path: String, streamIndex: Int) {
            self.path = path
            self.streamIndex = streamIndex
        }
    }

    /// Each source's copy (its only stream is the video).
    public let files: [Source: String]

    /// Copies to read in place of these sources (none: the sources themselves).
    public init(_ files: [Source: String] = [:]) { self.files = files }

    /// The file and stream to decode for `source`.
    func decoded(for source: SegmentSource) -> (path: String, streamIndex: Int) {
        files[Source(path: source.path, streamIndex: source.streamIndex)].map { ($0, 0) } ?? (source.path, source.streamIndex)
    }
}
