#define _GNU_SOURCE
#include "cmoonavshim.h"
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <stdarg.h>

void moon_av_strerror(int error, char *buffer, size_t size) { av_make_error_string(buffer, size, error); }

const uint8_t *moon_stream_side_data(const AVStream *stream, enum AVPacketSideDataType type, size_t *size) {
#if LIBAVFORMAT_VERSION_MAJOR >= 61
    const AVPacketSideData *sd = av_packet_side_data_get(stream->codecpar->coded_side_data,
                                                         stream->codecpar->nb_coded_side_data, type);
    if (!sd) return NULL;
    *size = sd->size;
    return sd->data;
#else
    return av_stream_get_side_data(stream, type, size);
#endif
}

const int32_t *moon_stream_display_matrix(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *data = moon_stream_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    return (data && size >= 9 * sizeof(int32_t)) ? (const int32_t *)data : NULL;
}

int moon_set_stream_side_data(AVStream *stream, enum AVPacketSideDataType type, const uint8_t *data, size_t size) {
#if LIBAVFORMAT_VERSION_MAJOR >= 61
    AVPacketSideData *sd = av_packet_side_data_new(&stream->codecpar->coded_side_data,
                                                   &stream->codecpar->nb_coded_side_data, type, size, 0);
    if (!sd) return AVERROR(ENOMEM);
    memcpy(sd->data, data, size);
#else
    uint8_t *copy = av_stream_new_side_data(stream, type, size);
    if (!copy) return AVERROR(ENOMEM);
    memcpy(copy, data, size);
#endif
    return 0;
}

int moon_copy_stream_side_data(AVStream *destination, const AVStream *source) {
    static const enum AVPacketSideDataType kept[] = {
        AV_PKT_DATA_DISPLAYMATRIX, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, AV_PKT_DATA_CONTENT_LIGHT_LEVEL,
    };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        size_t size = 0;
        const uint8_t *data = moon_stream_side_data(source, kept[i], &size);
        if (!data || size == 0) continue;
        int status = moon_set_stream_side_data(destination, kept[i], data, size);
        if (status < 0) return status;
    }
    return 0;
}

int moon_set_extradata(AVCodecParameters *parameters, const uint8_t *data, int size) {
    uint8_t *copy = av_mallocz((size_t)size + AV_INPUT_BUFFER_PADDING_SIZE);
    if (!copy) return AVERROR(ENOMEM);
    memcpy(copy, data, (size_t)size);
    av_freep(&parameters->extradata);
    parameters->extradata = copy;
    parameters->extradata_size = size;
    return 0;
}

int moon_malloc_trim(void) { return malloc_trim(0); }

int moon_rename_noreplace(const char *from, const char *to) {
#ifdef RENAME_NOREPLACE
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int moon_interrupt_callback(void *flag) { return flag && __atomic_load_n((volatile int *)flag, __ATOMIC_RELAXED); }

void moon_set_interrupt(AVFormatContext *context, volatile int *flag) {
    context->interrupt_callback.callback = moon_interrupt_callback;
    context->interrupt_callback.opaque = (void *)flag;
}

static _Thread_local char last_log[512];
static int stderr_level = AV_LOG_QUIET;

static void capture(void *avcl, int level, const char *fmt, va_list vl) {
    (void)avcl;
    if (level > AV_LOG_ERROR && level > stderr_level) return;
    char line[512];
    va_list copy;
    va_copy(copy, vl);
    vsnprintf(line, sizeof line, fmt, copy);
    va_end(copy);
    if (level <= AV_LOG_ERROR) {
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ')) line[--n] = 0;
        if (n > 0) memcpy(last_log, line, n + 1);
    }
    if (level <= stderr_level) fputs(line, stderr);
}

void moon_av_log_capture(int enable_stderr_level) {
    stderr_level = enable_stderr_level;
    av_log_set_callback(capture);
}

void moon_av_last_log(char *buffer, size_t size) {
    if (size == 0) return;
    strncpy(buffer, last_log, size - 1);
    buffer[size - 1] = 0;
}

void moon_av_clear_last_log(void) { last_log[0] = 0; }

#include <errno.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>

static int moon_ioctl(int fd, unsigned long request, void *argument) {
    int status;
    do { status = ioctl(fd, request, argument); } while (status < 0 && errno == EINTR);
    return status;
}

// Adds one size's entry with the interval range the driver reports for it.
static void moon_v4l2_add(int fd, uint32_t fourcc, uint32_t width, uint32_t height,
                          moon_v4l2_format *formats, int capacity, int *count) {
    if (*count >= capacity) return;
    moon_v4l2_format entry = { fourcc, width, height, 0, 0, 0, 0 };
    struct v4l2_frmivalenum interval = { .index = 0, .pixel_format = fourcc, .width = width, .height = height };
    while (moon_ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &interval) == 0) {
        struct v4l2_fract shortest, longest;
        if (interval.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
            shortest = longest = interval.discrete;
        } else {
            shortest = interval.stepwise.min;
            longest = interval.stepwise.max;
        }
        // Compare a/b < c/d as a*d < c*b (64-bit: no overflow).
        if (entry.shortest_denominator == 0 ||
            (uint64_t)shortest.numerator * entry.shortest_denominator < (uint64_t)entry.shortest_numerator * shortest.denominator) {
            entry.shortest_numerator = shortest.numerator;
            entry.shortest_denominator = shortest.denominator;
        }
        if (entry.longest_denominator == 0 ||
            (uint64_t)longest.numerator * entry.longest_denominator > (uint64_t)entry.longest_numerator * longest.denominator) {
            entry.longest_numerator = longest.numerator;
            entry.longest_denominator = longest.denominator;
        }
        if (interval.type != V4L2_FRMIVAL_TYPE_DISCRETE) break;
        interval.index++;
    }
    formats[(*count)++] = entry;
}

int moon_v4l2_formats(const char *path, char *card, size_t card_size, moon_v4l2_format *formats, int capacity) {
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    struct v4l2_capability capability;
    memset(&capability, 0, sizeof capability);
    if (moon_ioctl(fd, VIDIOC_QUERYCAP, &capability) < 0) { close(fd); return -1; }
    uint32_t caps = (capability.capabilities & V4L2_CAP_DEVICE_CAPS) ? capability.device_caps : capability.capabilities;
    if (!(caps & V4L2_CAP_VIDEO_CAPTURE)) { close(fd); return -1; }
    if (card_size > 0) {
        snprintf(card, card_size, "%s", (const char *)capability.card);
    }
    int count = 0;
    struct v4l2_fmtdesc description = { .index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
    while (moon_ioctl(fd, VIDIOC_ENUM_FMT, &description) == 0) {
        struct v4l2_frmsizeenum size = { .index = 0, .pixel_format = description.pixelformat };
        while (moon_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &size) == 0) {
            if (size.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
                moon_v4l2_add(fd, description.pixelformat, size.discrete.width, size.discrete.height, formats, capacity, &count);
                size.index++;
            } else {
                // Stepwise or continuous: offer the largest size.
                moon_v4l2_add(fd, description.pixelformat, size.stepwise.max_width, size.stepwise.max_height, formats, capacity, &count);
                break;
            }
        }
        description.index++;
    }
    close(fd);
    return count;
}

#include <libavdevice/avdevice.h>

void moon_avdevice_register(void) { avdevice_register_all(); }

int moon_avdevice_sources(const char *format, void (*found)(void *context, const char *name, const char *description), void *context) {
    const AVInputFormat *input = av_find_input_format(format);
    if (!input) return AVERROR(ENOENT);
    AVDeviceInfoList *list = NULL;
    int status = avdevice_list_input_sources(input, NULL, NULL, &list);
    if (status < 0) { avdevice_free_list_devices(&list); return status; }
    int count = 0;
    for (int i = 0; list && i < list->nb_devices; i++) {
        AVDeviceInfo *info = list->devices[i];
        if (!info || !info->device_name) continue;
        found(context, info->device_name, info->device_description);
        count++;
    }
    avdevice_free_list_devices(&list);
    return count;
}
