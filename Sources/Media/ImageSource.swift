/// A still image for layer contents: a file, identified by its path so renderers can cache
/// it, or pixels already in memory (a frame from `ImageGenerator.image(at:)`).
public struct ImageSource: Sendable, Hashable {
    /// The file, or a description of the in-memory picture.
    public let path: String
    /// Width in pixels of the picture as shown (after any EXIF turn).
    public let width: Int
    /// Height in pixels of the picture as shown (after any EXIF turn).
    public let height: Int
    /// The picture already in memory; nil for a file, which renderers load (and cache by
    /// path) when they first draw it.
    public let pixels: RGBAImage?

    /// An image file (PNG, JPEG, WebP or PGM) and its upright pixel size, which
    /// `ImageLoader.pixelSize(of:)` reads from the header. The file is not opened here; a
    /// missing or damaged file makes the export fail when it is first drawn.
    public init(path: String, width: Int, height: Int) {
        self.path = path
        self.width = width
        self.height = height
        pixels = nil
    }

    /// Pixels already in memory (a frame from `ImageGenerator.image(at:)`); `description`
    /// names them in messages and stands in for `path`.
    public init(pixels: RGBAImage, description: String) {
        path = description
        width = pixels.width
        height = pixels.height
        self.pixels = pixels
    }

    /// Equal when path and size match and they share the same in-memory pixels (the same
    /// object), or both are files.
    public static func == (a: ImageSource, b: ImageSource) -> Bool {
        a.path == b.path && a.width == b.width && a.height == b.height && a.pixels === b.pixels
    }

    /// Hashes the path and the identity of the in-memory pixels.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(pixels.map(ObjectIdentifier.init))
    }
}
