#define _GNU_SOURCE
#include "cmoonavshim.h"
#include <fcntl.h>
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

int moon_copy_display_matrix(AVStream *destination, const AVStream *source) {
    const int32_t *matrix = moon_stream_display_matrix(source);
    if (!matrix) return 0;
#if LIBAVFORMAT_VERSION_MAJOR >= 61
    AVPacketSideData *sd = av_packet_side_data_new(&destination->codecpar->coded_side_data,
                                                   &destination->codecpar->nb_coded_side_data,
                                                   AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t), 0);
    if (!sd) return AVERROR(ENOMEM);
    memcpy(sd->data, matrix, 9 * sizeof(int32_t));
#else
    uint8_t *data = av_stream_new_side_data(destination, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
    if (!data) return AVERROR(ENOMEM);
    memcpy(data, matrix, 9 * sizeof(int32_t));
#endif
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
