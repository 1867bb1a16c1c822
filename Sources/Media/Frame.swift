import CMoonFFmpeg
import CMoonAVShim

/// Owns one `AVFrame`. Frames move between pipeline stages through bounded queues; a
/// stage never touches a frame after handing it on, which is what makes the transfer safe.
package final class Frame: @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<AVFrame>

    package init() throws {
        guard let frame = av_frame_alloc() else { throw EngineError("out of memory allocating a frame", kind: .limit) }
        pointer = frame
    }

    /// A new frame with its own buffers for a video picture.
    package convenience init(width: Int, height: Int, format: AVPixelFormat) throws {
        try self.init()
        pointer.pointee.width = Int32(width)
        pointer.pointee.height = Int32(height)
        pointer.pointee.format = format.rawValue
        try check(av_frame_get_buffer(pointer, 0), "allocating a \(width)×\(height) frame")
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

    /// A new reference to the same buffers (no pixel copy).
    package func reference() throws -> Frame {
        let copy = try Frame()
        try check(av_frame_ref(copy.pointer, pointer), "referencing a frame")
        return copy
    }

    package var width: Int { Int(pointer.pointee.width) }
    package var height: Int { Int(pointer.pointee.height) }
    package var pixelFormat: AVPixelFormat { AVPixelFormat(pointer.pointee.format) }

    /// A BGRA frame's pixels for the layer renderer.
    package var bgraPixels: BGRAPixels {
        let (base, stride) = plane(0)
        return BGRAPixels(base: base, width: width, height: height, stride: stride)
    }

    /// Base address and line size of plane `i` (AVFrame's arrays import as tuples).
    package func plane(_ i: Int) -> (UnsafeMutablePointer<UInt8>, Int) {
        let data = withUnsafeBytes(of: pointer.pointee.data) { $0.load(fromByteOffset: i * 8, as: UnsafeMutablePointer<UInt8>?.self) }
        let lineSize = withUnsafeBytes(of: pointer.pointee.linesize) { $0.load(fromByteOffset: i * 4, as: Int32.self) }
        guard let data else { preconditionFailure("plane \(i) of a \(pixelFormat) frame is missing") }
        return (data, Int(lineSize))
    }
}
