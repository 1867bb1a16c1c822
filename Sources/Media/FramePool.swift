import CMoonFFmpeg
import CMoonAVShim

/// Pictures of one size and pixel format whose memory is recycled (an `AVBufferPool`): a
/// frame made for each output picture then reuses buffers instead of faulting fresh pages
/// in (the kernel zeroes every new page: 3 MB for each 1080p picture). The layout (line
/// sizes, plane offsets, padding) is `av_frame_get_buffer`'s, read off a first frame that
/// is then let go (it would be one more picture held for the pool's whole life).
package final class FramePool {
    let width: Int
    let height: Int
    let format: AVPixelFormat
    private var pool: OpaquePointer?
    private let lineSizes: (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32)
    private let planeOffsets: [Int?]

    package init(width: Int, height: Int, format: AVPixelFormat) throws {
        (self.width, self.height, self.format) = (width, height, format)
        let first = try Frame(width: width, height: height, format: format)
        // Read while `first` still owns the buffer it describes.
        let layout = withExtendedLifetime(first) { () -> (size: Int, offsets: [Int?], lineSizes: (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32))? in
            let frame = first.pointer.pointee
            // One buffer holds every plane (FFmpeg's software frames); anything else is not pooled.
            guard let buffer = frame.buf.0, frame.buf.1 == nil, let base = buffer.pointee.data else { return nil }
            let planes = [frame.data.0, frame.data.1, frame.data.2, frame.data.3]
            return (buffer.pointee.size, planes.map { plane in plane.map { base.distance(to: $0) } }, frame.linesize)
        }
        guard let layout else { throw EngineError("cannot pool \(width)×\(height) frames of this format", kind: .internal) }
        (planeOffsets, lineSizes) = (layout.offsets, layout.lineSizes)
        guard let made = av_buffer_pool_init(layout.size, nil) else { throw EngineError("out of memory making a frame pool", kind: .limit) }
        pool = made
    }

    deinit {
        // Buffers still in use keep the pool's memory until they come back.
        av_buffer_pool_uninit(&pool)
    }

    /// A frame of the pool's size and format, with the first frame's line sizes; its pixels
    /// are whatever a previous user left.
    func frame() throws -> Frame {
        let frame = try Frame()
        guard let buffer = av_buffer_pool_get(pool), let base = buffer.pointee.data else {
            throw EngineError("out of memory allocating a \(width)×\(height) frame", kind: .limit)
        }
        let picture = frame.pointer
        picture.pointee.buf.0 = buffer
        picture.pointee.width = Int32(width)
        picture.pointee.height = Int32(height)
        picture.pointee.format = format.rawValue
        picture.pointee.linesize = lineSizes
        let data = planeOffsets.map { offset in offset.map { base + $0 } }
        picture.pointee.data = (data[0], data[1], data[2], data[3], nil, nil, nil, nil)
        moon_frame_use_own_data(picture)
        return frame
    }

    /// Makes `frame` safe to write: when something else (the decoder, keeping it as a
    /// reference picture) holds its buffers, its pixels and properties move to a pooled copy.
    package func makeWritable(_ frame: Frame) throws {
        guard av_frame_is_writable(frame.pointer) == 0 else { return }
        let copy = try self.frame()
        try check(av_frame_copy(copy.pointer, frame.pointer), "copying a frame")
        try check(av_frame_copy_props(copy.pointer, frame.pointer), "copying a frame's properties")
        av_frame_unref(frame.pointer)
        av_frame_move_ref(frame.pointer, copy.pointer)
    }

    /// Whether `frame` has this pool's size and format.
    package func fits(_ frame: Frame) -> Bool {
        frame.width == width && frame.height == height && frame.pixelFormat == format
    }
}
