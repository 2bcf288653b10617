/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * swarmfan: send one file range, after an optional small header, to many
 * connected TCP sockets in one call, straight from the page cache.
 *
 * The ABI of /dev/swarmfan. Shared by the module (kmod/swarmfan.c) and user
 * space (the node's kmod fan-out backend, the in-VM tests). Fixed-width
 * <linux/types.h> types only, naturally aligned, pointers carried as __u64,
 * so the layout is the same for 32- and 64-bit callers, C and C++.
 *
 * A "frame" is header_len bytes of header followed by length bytes of the
 * file starting at offset. Each target socket is sent the frame from its own
 * starting point (target.start), so a caller can resume a socket that
 * stopped earlier.
 *
 * Return value of ioctl(fd, SWARMFAN_IOC_SEND, &send):
 *   >= 0  the number of targets that now have the whole frame
 *         (start + result == header_len + length).
 *   < 0   -1 with errno set. Call-level errors found before anything is
 *         sent leave every target untouched:
 *           EFAULT   a bad pointer (the struct, header or targets array)
 *           EINVAL   wrong version, non-zero flags or reserved field,
 *                    nr_targets == 0, file not a regular file, offset
 *                    negative as a signed 64-bit value or offset + length
 *                    past it (as sendfile(): rw_verify_area())
 *           E2BIG    nr_targets > SWARMFAN_MAX_TARGETS
 *           EMSGSIZE header_len > SWARMFAN_MAX_HEADER
 *           EFBIG    length > SWARMFAN_MAX_LENGTH
 *           EBADF    file_fd not open for reading (as sendfile())
 *           ESPIPE   the file does not allow positioned reads
 *           EACCES, EPERM, ...  a security module refused reading the
 *                    file (the file_permission hook sendfile() runs)
 *           ENXIO    offset + length beyond the end of the file (where
 *                    sendfile() would send a short count: a frame is all
 *                    or nothing)
 *           EOPNOTSUPP the file has no page cache to send from
 *           ENOTTY   an unknown ioctl command (or a struct of another size)
 *           ENOMEM   no memory for the call's own bookkeeping
 *         Errors once sending has started still write every target's
 *         result, so the caller learns how far each socket got:
 *           EINTR    a signal arrived; results are the bytes sent so far
 *           ENODATA  the file shrank under the range while it was sent
 *           EIO, ENOMEM  a page of the file could not be read
 *         (ENOMEM can come from either phase: a caller that sets every
 *         result to 0 before the call reads the right progress in both.)
 *
 * Per target, result is
 *   >= 0  bytes of the frame this call sent to the socket. Less than the
 *         rest of the frame when the socket is non-blocking (O_NONBLOCK) or
 *         its SO_SNDTIMEO expired and its send buffer filled: the call does
 *         not wait for such a socket, so a slow receiver cannot hold up the
 *         others. Resume it later with start advanced by result.
 *   < 0   -errno; nothing more was sent to that socket and its stream
 *         position is unknown (close it):
 *           -EBADF       fd not open, or not open for writing
 *           -ENOTSOCK    fd is not a socket
 *           -EPROTOTYPE  not a TCP stream socket (e.g. UDP, UNIX)
 *           -ENOTCONN    TCP socket that is not connected
 *           -EINVAL      reserved != 0, start beyond the frame, or the same
 *                        socket appears earlier in the array
 *           -EACCES, ... a security module refused writing to the socket
 *           -EPIPE, -ECONNRESET, ...  the connection failed mid-send
 *
 * The device is root:root 0660; its group is set by udev (kmod/README.md).
 * A call may send only what sendfile() could send with the same
 * descriptors, and the file is read as read() reads it (a tmpfs hole is
 * sent as zeros and never allocated).
 *
 * Zero-copy: the sockets reference the page-cache pages, exactly as
 * sendfile() does, so rewriting the file range while it is in flight may
 * change the bytes a receiver sees. As with two sendfile() calls, two calls
 * sending to the same socket at once interleave their frames: keep one
 * sender per socket.
 */
#ifndef _UAPI_LINUX_SWARMFAN_H
#define _UAPI_LINUX_SWARMFAN_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SWARMFAN_DEVICE		"/dev/swarmfan"
#define SWARMFAN_ABI_VERSION	1

#define SWARMFAN_MAX_TARGETS	1024
#define SWARMFAN_MAX_HEADER	4096
#define SWARMFAN_MAX_LENGTH	(1ULL << 30)

struct swarmfan_target {
	__s32 fd;		/* in: a connected TCP socket (IPv4 or IPv6) */
	__u32 reserved;		/* in: must be 0 */
	__u64 start;		/* in: frame bytes this socket already has */
	__s64 result;		/* out: bytes sent by this call, or -errno */
};

struct swarmfan_send {
	__u32 version;		/* SWARMFAN_ABI_VERSION */
	__u32 flags;		/* must be 0 */
	__s32 file_fd;		/* a regular file open for reading */
	__u32 header_len;	/* 0 .. SWARMFAN_MAX_HEADER */
	__u64 offset;		/* where the payload starts in the file */
	__u64 length;		/* payload bytes, 0 .. SWARMFAN_MAX_LENGTH */
	__u64 header;		/* pointer to header_len bytes */
	__u64 targets;		/* pointer to struct swarmfan_target[nr_targets] */
	__u32 nr_targets;	/* 1 .. SWARMFAN_MAX_TARGETS */
	__u32 reserved;		/* must be 0 */
};

#define SWARMFAN_IOC_MAGIC	0xF5
#define SWARMFAN_IOC_SEND	_IOW(SWARMFAN_IOC_MAGIC, 1, struct swarmfan_send)

#endif /* _UAPI_LINUX_SWARMFAN_H */
