// SPDX-License-Identifier: GPL-2.0
/*
 * swarmfan - send one page-cache range to many TCP sockets in one call.
 *
 * /dev/swarmfan takes one ioctl, SWARMFAN_IOC_SEND (see
 * include/uapi/linux/swarmfan.h): a file range, an optional small header
 * and up to SWARMFAN_MAX_TARGETS connected TCP sockets. Each page of the
 * range is looked up in the page cache once and handed by reference to
 * every socket, so the payload is neither copied through user space nor
 * read from the file once per socket, as one sendfile() per socket would.
 *
 * Everything user space passes is checked before use: the struct and its
 * limits, the file (a regular file, with a page cache), every socket (a
 * connected TCP stream socket, not repeated). The call allows no more than
 * sendfile(2) would with the same descriptors: the file must be open for
 * reading and pass rw_verify_area(READ) for the range, each socket must be
 * open for writing and pass rw_verify_area(WRITE), which run the LSM
 * file_permission hook as do_sendfile() does, and the same fsnotify events
 * are generated. The file is read as read(2) reads it: a tmpfs hole is sent
 * as zeros, never allocated. A socket that fails only fails its own target;
 * the others go on. Non-blocking sockets are sent what fits and left, so
 * one slow receiver cannot stall the rest. A pending signal ends the call
 * with every target's progress reported.
 *
 * The module keeps no state between calls: each call owns its references
 * (the file, the sockets, one page at a time), so concurrent callers need
 * no locking here. The file operations carry THIS_MODULE, so an open
 * /dev/swarmfan pins the module and rmmod fails until it is closed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fsnotify.h>
#include <linux/in.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#include <linux/bvec.h>
#endif

#include "include/uapi/linux/swarmfan.h"

/* One target socket for the length of one call. */
struct swarmfan_dest {
	struct socket *sock;	/* holds a file reference; NULL if rejected */
	u64 pos;		/* next frame byte to send */
	u64 sent;		/* frame bytes this call sent */
	int err;		/* negative errno once the socket failed */
	int msg_flags;		/* MSG_NOSIGNAL, plus MSG_DONTWAIT if O_NONBLOCK */
	bool active;		/* still wants bytes in this call */
};

/* Everything one SWARMFAN_IOC_SEND call holds. */
struct swarmfan_job {
	struct file *file;
	bool shmem;		/* tmpfs: pages come from shmem, not ->read_folio */
	bool payload_sent;	/* a byte of the file went out: fsnotify, atime */
	u64 offset;
	u64 length;
	u64 frame;		/* header_len + length */
	u8 *header;
	u32 header_len;
	u32 nr;
	u32 nr_active;
	struct swarmfan_target *targets;	/* kernel copy of the user array */
	void __user *utargets;			/* the user array */
	size_t targets_size;
	struct swarmfan_dest *dests;
};

/*
 * Flags for a send that is not the last one of the frame: let TCP coalesce
 * the header and consecutive pages into full segments.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define SWARMFAN_MSG_MORE	MSG_MORE

/* sendpage is gone since 6.5; sendmsg splices the page by reference. */
static int swarmfan_sendpage(struct socket *sock, struct page *page,
			     unsigned int off, unsigned int len, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_SPLICE_PAGES };
	struct bio_vec bvec;

	bvec_set_page(&bvec, page, len, off);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bvec, 1, len);
	return sock_sendmsg(sock, &msg);
}
#else
#define SWARMFAN_MSG_MORE	(MSG_MORE | MSG_SENDPAGE_NOTLAST)

static int swarmfan_sendpage(struct socket *sock, struct page *page,
			     unsigned int off, unsigned int len, int flags)
{
	return kernel_sendpage(sock, page, off, len, flags);
}
#endif

static int swarmfan_check_request(const struct swarmfan_send *req)
{
	if (req->version != SWARMFAN_ABI_VERSION || req->flags || req->reserved)
		return -EINVAL;
	if (!req->nr_targets)
		return -EINVAL;
	if (req->nr_targets > SWARMFAN_MAX_TARGETS)
		return -E2BIG;
	if (req->header_len > SWARMFAN_MAX_HEADER)
		return -EMSGSIZE;
	if (req->length > SWARMFAN_MAX_LENGTH)
		return -EFBIG;
	return 0;
}

/*
 * The file: first what do_sendfile() checks on its input, in its order
 * (open for reading, positioned reads allowed, rw_verify_area(READ) for the
 * range, which refuses a negative offset or a range past the largest
 * offset and runs the LSM file_permission hook), then what this module
 * needs: a regular file with a page cache, and the whole range inside it
 * (sendfile() would send a short count; a frame is all or nothing).
 */
static int swarmfan_check_file(struct swarmfan_job *job)
{
	struct file *file = job->file;
	struct inode *inode = file_inode(file);
	loff_t pos = job->offset;	/* >= 2^63 is negative, as for sendfile */
	loff_t size;
	int ret;

	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (!S_ISREG(inode->i_mode))
		return -EINVAL;
	if (!(file->f_mode & FMODE_PREAD))
		return -ESPIPE;
	/* length <= SWARMFAN_MAX_LENGTH: it fits a size_t as a positive ssize_t. */
	ret = rw_verify_area(READ, file, &pos, job->length);
	if (ret)
		return ret;
	if (IS_DAX(inode))
		return -EOPNOTSUPP;
	/*
	 * tmpfs has no ->read_folio in 6.1 (read_mapping_folio() would crash
	 * on it); its pages are looked up without it, see
	 * swarmfan_get_shmem_folio().
	 */
	job->shmem = shmem_mapping(file->f_mapping);
	if (!job->shmem && !file->f_mapping->a_ops->read_folio)
		return -EOPNOTSUPP;

	size = i_size_read(inode);
	if (job->offset > (u64)size || job->length > (u64)size - job->offset)
		return -ENXIO;
	return 0;
}

/*
 * A socket: what do_sendfile() checks on its output (open for writing,
 * rw_verify_area(WRITE), i.e. the LSM file_permission hook; a socket has
 * no position, so none is passed), then a connected TCP stream.
 */
static int swarmfan_check_socket(struct socket *sock, u64 count)
{
	struct sock *sk = sock->sk;
	int ret;

	if (!(sock->file->f_mode & FMODE_WRITE))
		return -EBADF;
	ret = rw_verify_area(WRITE, sock->file, NULL, count);
	if (ret)
		return ret;
	if (!sk || sock->type != SOCK_STREAM ||
	    sk->sk_protocol != IPPROTO_TCP ||
	    (sk->sk_family != AF_INET && sk->sk_family != AF_INET6))
		return -EPROTOTYPE;
	/* CLOSE_WAIT: the peer stopped sending, it may still be reading. */
	if (!((1 << READ_ONCE(sk->sk_state)) &
	      (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)))
		return -ENOTCONN;
	return 0;
}

/* Takes a reference on every acceptable socket; rejects the rest. */
static void swarmfan_get_sockets(struct swarmfan_job *job)
{
	u32 i, j;

	for (i = 0; i < job->nr; i++) {
		const struct swarmfan_target *t = &job->targets[i];
		struct swarmfan_dest *d = &job->dests[i];
		struct socket *sock;
		int err;

		if (t->reserved || t->start > job->frame) {
			d->err = -EINVAL;
			continue;
		}
		sock = sockfd_lookup(t->fd, &err);
		if (!sock) {
			d->err = err;
			continue;
		}
		err = swarmfan_check_socket(sock, job->frame - t->start);
		/* The same socket twice would interleave two copies. */
		for (j = 0; !err && j < i; j++)
			if (job->dests[j].sock == sock)
				err = -EINVAL;
		if (err) {
			sockfd_put(sock);
			d->err = err;
			continue;
		}
		d->sock = sock;
		d->pos = t->start;
		d->msg_flags = MSG_NOSIGNAL;
		if (sock->file->f_flags & O_NONBLOCK)
			d->msg_flags |= MSG_DONTWAIT;
		d->active = d->pos < job->frame;
		if (d->active)
			job->nr_active++;
	}
}

/*
 * What sendfile() does once bytes moved: IN_ACCESS and atime on the file if
 * any of it was sent, IN_MODIFY on every socket written to.
 */
static void swarmfan_notify(struct swarmfan_job *job)
{
	u32 i;

	if (job->payload_sent) {
		fsnotify_access(job->file);
		file_accessed(job->file);
	}
	for (i = 0; i < job->nr; i++)
		if (job->dests[i].sock && job->dests[i].sent)
			fsnotify_modify(job->dests[i].sock->file);
}

static void swarmfan_put_sockets(struct swarmfan_job *job)
{
	u32 i;

	for (i = 0; i < job->nr; i++) {
		if (job->dests[i].sock) {
			sockfd_put(job->dests[i].sock);
			job->dests[i].sock = NULL;
		}
	}
}

/*
 * A send to @d ended short with @err. Would-block (a non-blocking socket
 * whose buffer is full, or an expired SO_SNDTIMEO) only stops this socket;
 * its progress stands. A signal stops the whole call. Anything else is a
 * failed connection.
 */
static int swarmfan_stop(struct swarmfan_job *job, struct swarmfan_dest *d,
			 int err)
{
	d->active = false;
	job->nr_active--;
	if (err == -EAGAIN)
		return 0;
	if (err == -ERESTARTSYS || err == -EINTR)
		return -EINTR;
	d->err = err;
	return 0;
}

static int swarmfan_send_header(struct swarmfan_job *job,
				struct swarmfan_dest *d)
{
	int more = job->length ? MSG_MORE : 0;

	while (d->pos < job->header_len) {
		struct kvec vec = {
			.iov_base = job->header + d->pos,
			.iov_len = job->header_len - d->pos,
		};
		struct msghdr msg = { .msg_flags = d->msg_flags | more };
		int n;

		n = kernel_sendmsg(d->sock, &msg, &vec, 1, vec.iov_len);
		if (n <= 0)
			return swarmfan_stop(job, d, n ? n : -EAGAIN);
		d->pos += n;
		d->sent += n;
	}
	return 0;
}

/* Sends frame bytes [fpos, fpos + len), held by @page from @poff on. */
static int swarmfan_send_page(struct swarmfan_job *job,
			      struct swarmfan_dest *d, struct page *page,
			      u64 fpos, unsigned int poff, unsigned int len)
{
	int more = fpos + len < job->frame ? SWARMFAN_MSG_MORE : 0;
	u64 end = fpos + len;

	while (d->pos < end) {
		unsigned int skip = d->pos - fpos;
		int n;

		n = swarmfan_sendpage(d->sock, page, poff + skip, len - skip,
				      d->msg_flags | more);
		if (n <= 0)
			return swarmfan_stop(job, d, n ? n : -EAGAIN);
		d->pos += n;
		d->sent += n;
		job->payload_sent = true;
	}
	return 0;
}

/*
 * A swapped-out tmpfs page (data, not a hole), read through tmpfs's own
 * ->read_iter, which brings it back from swap as read(2) would, into a
 * private page that every socket then shares: one copy for all of them. The range was checked once, as do_splice_to()
 * checks before ->splice_read. A short read leaves zeros; a truncation is
 * caught by the caller's size check.
 */
static struct folio *swarmfan_read_swapped(struct swarmfan_job *job,
					   pgoff_t index)
{
	struct folio *folio;
	struct kiocb kiocb;
	struct iov_iter iter;
	struct kvec vec;
	ssize_t n;

	folio = folio_alloc(GFP_KERNEL | __GFP_ZERO, 0);
	if (!folio)
		return ERR_PTR(-ENOMEM);
	vec.iov_base = folio_address(folio);
	vec.iov_len = PAGE_SIZE;
	iov_iter_kvec(&iter, ITER_DEST, &vec, 1, PAGE_SIZE);
	init_sync_kiocb(&kiocb, job->file);
	kiocb.ki_pos = (loff_t)index << PAGE_SHIFT;
	n = call_read_iter(job->file, &kiocb, &iter);
	if (n < 0) {
		folio_put(folio);
		return ERR_PTR(n);
	}
	return folio;
}

/*
 * A tmpfs page as read(2) sees it, without filling holes (which
 * shmem_read_mapping_page() would: it allocates a page for a hole). In the
 * cache and uptodate: that folio. A hole, or a fallocated folio nobody has
 * written (not uptodate, its content undefined): the zero page, as
 * shmem_file_read_iter() returns. Swapped out: swarmfan_read_swapped().
 */
static struct folio *swarmfan_get_shmem_folio(struct swarmfan_job *job,
					      pgoff_t index)
{
	struct folio *folio;

	folio = __filemap_get_folio(job->file->f_mapping, index, FGP_ENTRY, 0);
	if (xa_is_value(folio))
		return swarmfan_read_swapped(job, index);
	if (folio && folio_test_uptodate(folio))
		return folio;
	if (folio)
		folio_put(folio);
	folio = page_folio(ZERO_PAGE(0));
	folio_get(folio);
	return folio;
}

/*
 * The folio of the file at @index, uptodate, with a reference held. A cache
 * miss starts readahead for the rest of the range, so a cold file is read
 * in large requests rather than a page at a time.
 */
static struct folio *swarmfan_get_folio(struct swarmfan_job *job,
					pgoff_t index, pgoff_t last)
{
	struct file *file = job->file;
	struct address_space *mapping = file->f_mapping;
	struct folio *folio;

	if (job->shmem)
		return swarmfan_get_shmem_folio(job, index);

	folio = filemap_get_folio(mapping, index);
	if (!folio) {
		page_cache_sync_readahead(mapping, &file->f_ra, file, index,
					  last - index + 1);
		folio = filemap_get_folio(mapping, index);
	}
	if (folio && folio_test_uptodate(folio))
		return folio;
	if (folio)
		folio_put(folio);
	/* Waits for the readahead I/O, or reads the folio itself. */
	return read_mapping_folio(mapping, index, file);
}

/* Sends the frame to every active target, one page of the file at a time. */
static int swarmfan_run(struct swarmfan_job *job)
{
	struct inode *inode = file_inode(job->file);
	u64 hlen = job->header_len;
	u64 fpos = job->frame;
	pgoff_t last;
	u32 i;
	int ret;

	for (i = 0; i < job->nr; i++) {
		struct swarmfan_dest *d = &job->dests[i];

		if (!d->active)
			continue;
		if (d->pos < hlen) {
			if (signal_pending(current))
				return -EINTR;
			ret = swarmfan_send_header(job, d);
			if (ret)
				return ret;
		}
		if (d->active)
			fpos = min(fpos, d->pos);
	}
	if (!job->length)
		return 0;
	last = (job->offset + job->length - 1) >> PAGE_SHIFT;

	while (fpos < job->frame && job->nr_active) {
		u64 file_pos = job->offset + (fpos - hlen);
		pgoff_t index = file_pos >> PAGE_SHIFT;
		unsigned int poff = offset_in_page(file_pos);
		unsigned int len = min_t(u64, PAGE_SIZE - poff,
					 job->frame - fpos);
		struct folio *folio;
		struct page *page;

		if (signal_pending(current))
			return -EINTR;
		folio = swarmfan_get_folio(job, index, last);
		/* A truncate racing with us shows up as either of these. */
		if (file_pos + len > (u64)i_size_read(inode)) {
			if (!IS_ERR(folio))
				folio_put(folio);
			return -ENODATA;
		}
		if (IS_ERR(folio))
			return PTR_ERR(folio);
		/*
		 * Sockets take pages (sendpage); a large folio has many. The
		 * zero page and a private copy are order 0: their only page.
		 */
		page = folio_file_page(folio, index);

		ret = 0;
		for (i = 0; i < job->nr && !ret; i++) {
			struct swarmfan_dest *d = &job->dests[i];

			if (d->active && d->pos < fpos + len)
				ret = swarmfan_send_page(job, d, page, fpos,
							 poff, len);
		}
		folio_put(folio);
		if (ret)
			return ret;
		fpos += len;
		cond_resched();
	}
	return 0;
}

/* Copies each target's result into the user array's copy; counts finishers. */
static long swarmfan_results(struct swarmfan_job *job)
{
	long complete = 0;
	u32 i;

	for (i = 0; i < job->nr; i++) {
		struct swarmfan_dest *d = &job->dests[i];

		if (d->err) {
			job->targets[i].result = d->err;
			continue;
		}
		job->targets[i].result = d->sent;
		if (job->targets[i].start + d->sent == job->frame)
			complete++;
	}
	return complete;
}

/*
 * Takes what one call needs: the file (checked), the header and the targets
 * copied in, the results zeroed in user space, the per-socket state. On
 * failure nothing is held and nothing was sent.
 */
static int swarmfan_job_init(struct swarmfan_job *job,
			     const struct swarmfan_send *req)
{
	int ret;
	u32 i;

	job->offset = req->offset;
	job->length = req->length;
	job->header_len = req->header_len;
	job->frame = (u64)req->header_len + req->length;
	job->nr = req->nr_targets;

	job->file = fget(req->file_fd);
	if (!job->file)
		return -EBADF;
	ret = swarmfan_check_file(job);
	if (ret)
		goto err_put_file;

	if (job->header_len) {
		job->header = memdup_user(u64_to_user_ptr(req->header),
					  job->header_len);
		if (IS_ERR(job->header)) {
			ret = PTR_ERR(job->header);
			job->header = NULL;
			goto err_put_file;
		}
	}

	job->targets_size = array_size(job->nr, sizeof(*job->targets));
	job->utargets = u64_to_user_ptr(req->targets);
	job->targets = kvmalloc(job->targets_size, GFP_KERNEL_ACCOUNT);
	if (!job->targets) {
		ret = -ENOMEM;
		goto err_free_header;
	}
	if (copy_from_user(job->targets, job->utargets, job->targets_size)) {
		ret = -EFAULT;
		goto err_free_targets;
	}
	/*
	 * Make sure the results can be written back before sending a byte:
	 * a caller must never be left not knowing what went out.
	 */
	for (i = 0; i < job->nr; i++)
		job->targets[i].result = 0;
	if (copy_to_user(job->utargets, job->targets, job->targets_size)) {
		ret = -EFAULT;
		goto err_free_targets;
	}

	job->dests = kvcalloc(job->nr, sizeof(*job->dests), GFP_KERNEL_ACCOUNT);
	if (!job->dests) {
		ret = -ENOMEM;
		goto err_free_targets;
	}
	return 0;

err_free_targets:
	kvfree(job->targets);
err_free_header:
	kfree(job->header);
err_put_file:
	fput(job->file);
	return ret;
}

static void swarmfan_job_release(struct swarmfan_job *job)
{
	kvfree(job->dests);
	kvfree(job->targets);
	kfree(job->header);
	fput(job->file);
}

static long swarmfan_send(struct swarmfan_send __user *uarg)
{
	struct swarmfan_job job = {};
	struct swarmfan_send req;
	long complete;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = swarmfan_check_request(&req);
	if (ret)
		return ret;
	ret = swarmfan_job_init(&job, &req);
	if (ret)
		return ret;

	swarmfan_get_sockets(&job);
	ret = swarmfan_run(&job);
	swarmfan_notify(&job);
	swarmfan_put_sockets(&job);

	/* Sent bytes are reported even when the call failed part-way. */
	complete = swarmfan_results(&job);
	if (copy_to_user(job.utargets, job.targets, job.targets_size))
		ret = -EFAULT;
	swarmfan_job_release(&job);
	return ret ? ret : complete;
}

static long swarmfan_ioctl(struct file *filp, unsigned int cmd,
			   unsigned long arg)
{
	if (cmd != SWARMFAN_IOC_SEND)
		return -ENOTTY;
	return swarmfan_send((struct swarmfan_send __user *)arg);
}

static const struct file_operations swarmfan_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = swarmfan_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/*
 * root:root 0660 (devtmpfs); the group that may use it (swarmcast) is set
 * by udev, see kmod/60-swarmfan.rules: a misc device can only set a mode.
 */
static struct miscdevice swarmfan_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "swarmfan",
	.fops = &swarmfan_fops,
	.mode = 0660,
};

static int __init swarmfan_init(void)
{
	int ret;

	ret = misc_register(&swarmfan_misc);
	if (ret)
		pr_err("misc_register failed: %d\n", ret);
	return ret;
}

static void __exit swarmfan_exit(void)
{
	misc_deregister(&swarmfan_misc);
}

module_init(swarmfan_init);
module_exit(swarmfan_exit);

MODULE_DESCRIPTION("Send one page-cache range to many TCP sockets in one call");
MODULE_AUTHOR("swarmcast");
MODULE_LICENSE("GPL");
