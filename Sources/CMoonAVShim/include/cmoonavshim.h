#ifndef CMOONAVSHIM_H
#define CMOONAVSHIM_H
// FFmpeg constants and calls Swift cannot import (macros built from FFERRTAG, UINT64_C,
// compound literals) or that change between FFmpeg versions.
// FFmpeg's headers come through the CMoonFFmpeg module's own header, so the importer finds
// one owner for FFmpeg's declarations: included here directly they would also belong to this
// module, and a Swift file importing only CMoonFFmpeg could lose its enum constants
// ("cannot find 'AVCOL_RANGE_JPEG' in scope") depending on which module a compile job loads first.
#include "../../CMoonFFmpeg/cmoonffmpeg.h"
#include <stdint.h>

static const int MOON_AVERROR_EOF = AVERROR_EOF;
static const int MOON_AVERROR_EAGAIN = AVERROR(EAGAIN);
static const int MOON_AVERROR_EXIT = AVERROR_EXIT;
static const int MOON_AVERROR_INVALIDDATA = AVERROR_INVALIDDATA;
static const int MOON_AVERROR_DECODER_NOT_FOUND = AVERROR_DECODER_NOT_FOUND;
static const int MOON_AVERROR_ENCODER_NOT_FOUND = AVERROR_ENCODER_NOT_FOUND;
static const int MOON_AVERROR_EINVAL = AVERROR(EINVAL);
static const int MOON_AVERROR_ENOENT = AVERROR(ENOENT);
static const int MOON_AVERROR_ENOSPC = AVERROR(ENOSPC);
static const int64_t MOON_AV_NOPTS_VALUE = AV_NOPTS_VALUE;

// av_err2str is a macro around a compound literal.
void moon_av_strerror(int error, char *buffer, size_t size);

// A stream's side data of one type (and its size), or NULL. av_stream_get_side_data is
// deprecated in FFmpeg 6.1 and gone in 7; the new call reads codecpar->coded_side_data.
const uint8_t *moon_stream_side_data(const AVStream *stream, enum AVPacketSideDataType type, size_t *size);

// The display matrix of a stream (9 int32 in 16.16 / 2.30 fixed point), or NULL.
const int32_t *moon_stream_display_matrix(const AVStream *stream);

// Sets a copy of `size` bytes as an output stream's side data of one type (before the
// header is written). Returns 0 or AVERROR(ENOMEM).
int moon_set_stream_side_data(AVStream *stream, enum AVPacketSideDataType type, const uint8_t *data, size_t size);

// Copies what a stream copy keeps as stream metadata onto an output stream: the display
// matrix (rotation) and HDR10's mastering display and content light level. Returns 0 or a
// negative AVERROR.
int moon_copy_stream_side_data(AVStream *destination, const AVStream *source);

// Replaces a stream's codec extradata with a copy of `data` (zero padding included, as
// FFmpeg requires). Returns 0 or AVERROR(ENOMEM).
int moon_set_extradata(AVCodecParameters *parameters, const uint8_t *data, int size);

// Moves `from` to `to` only if nothing (not even a dangling symlink) is at `to`, atomically:
// renameat2 with RENAME_NOREPLACE, which Swift's Glibc module does not declare. Returns 0,
// or -1 with errno (EEXIST when something is there; EINVAL or ENOSYS when the file system
// cannot do it).
int moon_rename_noreplace(const char *from, const char *to);

// Gives the free memory inside glibc's heap arenas back to the system: malloc_trim(0), which
// Swift's Glibc module does not declare. Returns 1 when some was given back.
int moon_malloc_trim(void);

// Interrupt callback for blocking demuxer I/O: returns nonzero when *flag is set.
int moon_interrupt_callback(void *flag);
void moon_set_interrupt(AVFormatContext *context, volatile int *flag);

// Routes FFmpeg's log to a buffer the engine can read (last error-level line), so errors
// such as "moov atom not found" can be reported in one line instead of spilling on stderr.
void moon_av_log_capture(int enable_stderr_level);
// Copies the last captured error-level message of this thread into buffer.
void moon_av_last_log(char *buffer, size_t size);
void moon_av_clear_last_log(void);

// Registers libavdevice's inputs (v4l2, x11grab, pulse, alsa, lavfi); once per process.
void moon_avdevice_register(void);

// Calls `found(context, name, description)` for each source libavdevice's input `format`
// lists (description may be NULL). Returns the count, or a negative AVERROR.
int moon_avdevice_sources(const char *format, void (*found)(void *context, const char *name, const char *description), void *context);

// One frame size of a V4L2 camera's pixel format, with the range of frame intervals it
// offers (seconds per frame as fractions; shortest = fastest rate).
typedef struct {
    uint32_t fourcc;
    uint32_t width, height;
    uint32_t shortest_numerator, shortest_denominator;
    uint32_t longest_numerator, longest_denominator;
} moon_v4l2_format;

// Lists the capture formats of the V4L2 device at `path` through its ioctls
// (VIDIOC_ENUM_FMT, _FRAMESIZES, _FRAMEINTERVALS) and copies its card name. Returns the
// number of entries (at most `capacity`), or -1 when it is not a video capture device.
int moon_v4l2_formats(const char *path, char *card, size_t card_size, moon_v4l2_format *formats, int capacity);

// A video frame whose buffers were set by hand points extended_data at its own data array
// (as av_frame_get_buffer leaves it), which av_frame_move_ref and av_frame_copy rely on.
static inline void moon_frame_use_own_data(AVFrame *frame) { frame->extended_data = frame->data; }

#endif
