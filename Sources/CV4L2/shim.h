// CV4L2: the C surface GraniteCapture uses, and nothing else.
//
// libv4l2's v4l2_open/v4l2_ioctl are variadic and VIDIOC_* are function-like macros, neither of
// which Swift imports; they are re-exported here as static inline functions and constants.
// The _Static_asserts pin the x86-64/arm64 (LP64) layouts the Swift side relies on, so a header
// change fails the build instead of corrupting memory at run time.
#ifndef GRANITE_CV4L2_SHIM_H
#define GRANITE_CV4L2_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

static inline int cv4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }
static inline int cv4l2_close(int fd) { return v4l2_close(fd); }
static inline int cv4l2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }
static inline void *cv4l2_mmap(int fd, size_t length, long offset) {
    return v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (int64_t)offset);
}
static inline int cv4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }
static inline int cv4l2_is_map_failed(const void *p) { return p == MAP_FAILED; }
static inline int cv4l2_errno(void) { return errno; }

// One control's value through VIDIOC_G_EXT_CTRLS / VIDIOC_S_EXT_CTRLS (which = current value, so
// any control class): v4l2_ext_control is packed, which these keep out of Swift.
static inline int cv4l2_get_control(int fd, unsigned int id, int is64, int64_t *value) {
    struct v4l2_ext_control c = {0};
    struct v4l2_ext_controls cs = {0};
    c.id = id;
    cs.which = V4L2_CTRL_WHICH_CUR_VAL; cs.count = 1; cs.controls = &c;
    int r = v4l2_ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs);
    if (r == 0) *value = is64 ? c.value64 : (int64_t)c.value;
    return r;
}
static inline int cv4l2_set_control(int fd, unsigned int id, int is64, int64_t value) {
    struct v4l2_ext_control c = {0};
    struct v4l2_ext_controls cs = {0};
    c.id = id;
    if (is64) c.value64 = value; else c.value = (int32_t)value;
    cs.which = V4L2_CTRL_WHICH_CUR_VAL; cs.count = 1; cs.controls = &c;
    return v4l2_ioctl(fd, VIDIOC_S_EXT_CTRLS, &cs);
}
// A string control: `size` bytes of `text` including the terminating NUL.
static inline int cv4l2_get_string_control(int fd, unsigned int id, char *text, unsigned int size) {
    struct v4l2_ext_control c = {0};
    struct v4l2_ext_controls cs = {0};
    c.id = id; c.size = size; c.string = text;
    cs.which = V4L2_CTRL_WHICH_CUR_VAL; cs.count = 1; cs.controls = &c;
    return v4l2_ioctl(fd, VIDIOC_G_EXT_CTRLS, &cs);
}
static inline int cv4l2_set_string_control(int fd, unsigned int id, char *text, unsigned int size) {
    struct v4l2_ext_control c = {0};
    struct v4l2_ext_controls cs = {0};
    c.id = id; c.size = size; c.string = text;
    cs.which = V4L2_CTRL_WHICH_CUR_VAL; cs.count = 1; cs.controls = &c;
    return v4l2_ioctl(fd, VIDIOC_S_EXT_CTRLS, &cs);
}
// One menu item (VIDIOC_QUERYMENU; v4l2_querymenu is packed): its name, or its value for an
// integer menu. -1 with EINVAL for an index the menu skips.
static inline int cv4l2_query_menu(int fd, unsigned int id, unsigned int index, char name[32], int64_t *value) {
    struct v4l2_querymenu m = {0};
    m.id = id; m.index = index;
    int r = v4l2_ioctl(fd, VIDIOC_QUERYMENU, &m);
    if (r == 0) {
        for (int i = 0; i < 32; i++) name[i] = (char)m.name[i];
        name[31] = 0;
        *value = m.value;
    }
    return r;
}

static const unsigned long CV4L2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CV4L2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CV4L2_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CV4L2_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CV4L2_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CV4L2_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CV4L2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CV4L2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CV4L2_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CV4L2_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CV4L2_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CV4L2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long CV4L2_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long CV4L2_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long CV4L2_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;

static const unsigned int CV4L2_CTRL_FLAG_NEXT_CTRL = V4L2_CTRL_FLAG_NEXT_CTRL;
static const unsigned int CV4L2_BUF_TYPE_VIDEO_CAPTURE = V4L2_BUF_TYPE_VIDEO_CAPTURE;
static const unsigned int CV4L2_MEMORY_MMAP = V4L2_MEMORY_MMAP;
static const unsigned int CV4L2_FIELD_NONE = V4L2_FIELD_NONE;
static const unsigned int CV4L2_FIELD_ANY = V4L2_FIELD_ANY;
static const unsigned int CV4L2_CAP_VIDEO_CAPTURE = V4L2_CAP_VIDEO_CAPTURE;
static const unsigned int CV4L2_CAP_STREAMING = V4L2_CAP_STREAMING;
static const unsigned int CV4L2_CAP_DEVICE_CAPS = V4L2_CAP_DEVICE_CAPS;
static const unsigned int CV4L2_CAP_TIMEPERFRAME = V4L2_CAP_TIMEPERFRAME;
static const unsigned int CV4L2_FMT_FLAG_COMPRESSED = V4L2_FMT_FLAG_COMPRESSED;
static const unsigned int CV4L2_FMT_FLAG_EMULATED = V4L2_FMT_FLAG_EMULATED;
static const unsigned int CV4L2_FRMSIZE_TYPE_DISCRETE = V4L2_FRMSIZE_TYPE_DISCRETE;
static const unsigned int CV4L2_FRMIVAL_TYPE_DISCRETE = V4L2_FRMIVAL_TYPE_DISCRETE;
static const unsigned int CV4L2_BUF_FLAG_TIMESTAMP_MASK = V4L2_BUF_FLAG_TIMESTAMP_MASK;
static const unsigned int CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
static const unsigned int CV4L2_BUF_FLAG_ERROR = V4L2_BUF_FLAG_ERROR;
static const unsigned int CV4L2_CTRL_TYPE_BUTTON = V4L2_CTRL_TYPE_BUTTON;
static const unsigned int CV4L2_CTRL_FLAG_DISABLED = V4L2_CTRL_FLAG_DISABLED;
static const unsigned int CV4L2_CTRL_FLAG_READ_ONLY = V4L2_CTRL_FLAG_READ_ONLY;
static const unsigned int CV4L2_CTRL_FLAG_WRITE_ONLY = V4L2_CTRL_FLAG_WRITE_ONLY;
static const unsigned int CV4L2_CTRL_FLAG_INACTIVE = V4L2_CTRL_FLAG_INACTIVE;
static const unsigned int CV4L2_CTRL_FLAG_GRABBED = V4L2_CTRL_FLAG_GRABBED;
static const unsigned int CV4L2_CTRL_FLAG_VOLATILE = V4L2_CTRL_FLAG_VOLATILE;
static const unsigned int CV4L2_CTRL_FLAG_SLIDER = V4L2_CTRL_FLAG_SLIDER;
static const unsigned int CV4L2_BUF_TYPE_VIDEO_OUTPUT = V4L2_BUF_TYPE_VIDEO_OUTPUT;
static const unsigned int CV4L2_CAP_VIDEO_OUTPUT = V4L2_CAP_VIDEO_OUTPUT;
static const unsigned int CV4L2_CAP_VIDEO_OUTPUT_MPLANE = V4L2_CAP_VIDEO_OUTPUT_MPLANE;
static const unsigned int CV4L2_CAP_READWRITE = V4L2_CAP_READWRITE;
static const unsigned int CV4L2_BUF_FLAG_QUEUED = V4L2_BUF_FLAG_QUEUED;
static const unsigned int CV4L2_BUF_FLAG_DONE = V4L2_BUF_FLAG_DONE;

// Layouts the Swift side reads field by field (LP64 Linux, kernel UAPI as of 6.x).
_Static_assert(sizeof(struct v4l2_capability) == 104, "v4l2_capability layout changed");
_Static_assert(sizeof(struct v4l2_fmtdesc) == 64, "v4l2_fmtdesc layout changed");
_Static_assert(sizeof(struct v4l2_frmsizeenum) == 44, "v4l2_frmsizeenum layout changed");
_Static_assert(sizeof(struct v4l2_frmivalenum) == 52, "v4l2_frmivalenum layout changed");
_Static_assert(sizeof(struct v4l2_format) == 208, "v4l2_format layout changed");
_Static_assert(offsetof(struct v4l2_format, fmt) == 8, "v4l2_format.fmt offset changed");
_Static_assert(sizeof(struct v4l2_pix_format) == 48, "v4l2_pix_format layout changed");
_Static_assert(sizeof(struct v4l2_streamparm) == 204, "v4l2_streamparm layout changed");
_Static_assert(sizeof(struct v4l2_requestbuffers) == 20, "v4l2_requestbuffers layout changed");
_Static_assert(sizeof(struct v4l2_buffer) == 88, "v4l2_buffer layout changed");
_Static_assert(offsetof(struct v4l2_buffer, timestamp) == 24, "v4l2_buffer.timestamp offset changed");
_Static_assert(offsetof(struct v4l2_buffer, sequence) == 56, "v4l2_buffer.sequence offset changed");
_Static_assert(sizeof(struct v4l2_queryctrl) == 68, "v4l2_queryctrl layout changed");
_Static_assert(sizeof(struct v4l2_query_ext_ctrl) == 232, "v4l2_query_ext_ctrl layout changed");

#endif
