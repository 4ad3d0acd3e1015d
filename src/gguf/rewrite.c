/*
 * rewrite.c - a GGUF shard written again with its tensors in another
 * order: the same header bytes up to the tensor infos, new infos with new
 * offsets, and each tensor's data copied exactly, in the new order.
 *
 * Safe by construction: the output is written under a temporary name in
 * its own directory and renamed over the target only once every byte is
 * written and flushed, so a full disk or a failed write leaves no partial
 * file behind; an input whose data is not all there is refused before
 * anything is written.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "gguf/gguf.h"

#define COPY_CHUNK ((size_t)1 << 20)

typedef struct out {
    FILE *f;
    uint64_t pos;
    bool failed;
} out;

static void put(out *o, const void *p, size_t n)
{
    if (!o->failed && n && fwrite(p, 1, n, o->f) != n)
        o->failed = true;
    o->pos += n;
}

static void put_u32(out *o, uint32_t v)
{
    unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 24) };
    put(o, b, 4);
}

static void put_u64(out *o, uint64_t v)
{
    put_u32(o, (uint32_t)v);
    put_u32(o, (uint32_t)(v >> 32));
}

static void pad(out *o, uint32_t align)
{
    static const unsigned char zero[256];
    while (o->pos % align) {
        size_t n = (size_t)(align - o->pos % align);
        put(o, zero, n < sizeof zero ? n : sizeof zero);
    }
}

/* The data of every tensor of the shard must be in the file. */
static ggfit_status check_data(const ggfit_gguf *g, const ggfit__gguf_shard_raw *s, char **err)
{
    for (uint64_t k = 0; k < s->n_tensors; k++) {
        const ggfit_tensor_info *t = ggfit_gguf_tensor(g, s->first_tensor + k);
        uint64_t end = s->data_offset + t->offset + t->n_bytes;
        if (end > s->file_size)
            return ggfit__fail(err, GGFIT_EINVAL,
                               "%s: the tensor data is not all there (tensor '%s' ends at byte "
                               "%llu, the file has %llu): a header-only file or a partial "
                               "download cannot be reordered", s->path, t->name,
                               (unsigned long long)end, (unsigned long long)s->file_size);
    }
    return GGFIT_OK;
}

/* Each of the shard's tensors exactly once. */
static ggfit_status check_order(const ggfit__gguf_shard_raw *s, const uint64_t *order,
                                char **err)
{
    unsigned char *seen = ggfit__calloc(s->n_tensors ? (size_t)s->n_tensors : 1, 1);
    if (!seen)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status rc = GGFIT_OK;
    for (uint64_t k = 0; k < s->n_tensors && !rc; k++) {
        uint64_t i = order[k] - s->first_tensor;
        if (order[k] < s->first_tensor || i >= s->n_tensors || seen[i]++)
            rc = ggfit__fail(err, GGFIT_EINVAL, "%s: the new order is not a permutation of "
                                                "the shard's tensors", s->path);
    }
    free(seen);
    return rc;
}

static ggfit_status copy_tensor(FILE *in, out *o, const ggfit__gguf_shard_raw *s,
                                const ggfit_tensor_info *t, unsigned char *buf, char **err)
{
    if (fseeko(in, (off_t)(s->data_offset + t->offset), SEEK_SET) != 0)
        return ggfit__fail(err, GGFIT_EIO, "%s: cannot seek to tensor '%s': %s", s->path,
                           t->name, strerror(errno));
    for (uint64_t left = t->n_bytes; left;) {
        size_t n = left < COPY_CHUNK ? (size_t)left : COPY_CHUNK;
        if (fread(buf, 1, n, in) != n)
            return ggfit__fail(err, GGFIT_EIO, "%s: cannot read tensor '%s'%s", s->path,
                               t->name, ferror(in) ? "" : ": the file ended early");
        put(o, buf, n);
        if (o->failed)
            return GGFIT_EIO;
        left -= n;
    }
    return GGFIT_OK;
}

/* What a path that is not a regular file is, and how to give one instead:
 * the rename at the end would replace a link or a device node with the
 * new file, and fail on a directory only after every byte was written. */
static const char *not_regular(mode_t mode, const char **fix)
{
    *fix = "give a path for the new .gguf";
    if (S_ISREG(mode))
        return NULL;
    if (S_ISLNK(mode)) {
        *fix = "give the path of a file, not of a link (a link is never replaced)";
        return "a symbolic link";
    }
    if (S_ISDIR(mode)) {
        *fix = "give a path for the new .gguf, such as one inside it";
        return "a directory";
    }
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

ggfit_status ggfit__gguf_check_target(const char *out_path, const char *const *inputs,
                                      size_t n_inputs, bool force, char **err)
{
    struct stat st_out, st_in;
    if (lstat(out_path, &st_out) != 0)
        return GGFIT_OK;   /* a new file (a path it cannot be written to fails at its creation) */
    const char *fix, *what = not_regular(st_out.st_mode, &fix);
    if (what)
        return ggfit__fail(err, GGFIT_EINVAL, "%s is %s, not a regular file: %s", out_path,
                           what, fix);
    for (size_t k = 0; k < n_inputs; k++)
        if (stat(inputs[k], &st_in) == 0 && st_in.st_dev == st_out.st_dev &&
            st_in.st_ino == st_out.st_ino)
            return ggfit__fail(err, GGFIT_EINVAL, "%s: the output is the input (%s); write "
                                                  "another file", out_path, inputs[k]);
    if (!force)
        return ggfit__fail(err, GGFIT_EINVAL, "%s exists (--force replaces it)", out_path);
    return GGFIT_OK;
}

ggfit_status ggfit__gguf_rewrite(const ggfit_gguf *g, uint32_t i, const uint64_t *order,
                                 const char *out_path, bool force, char **err)
{
    ggfit__gguf_shard_raw s;
    ggfit_status rc;
    if (!ggfit__gguf_raw(g, i, &s))
        return ggfit__fail(err, GGFIT_EINVAL, "no shard %u", i);
    const char *path_in = s.path;
    if ((rc = check_data(g, &s, err)) || (rc = check_order(&s, order, err)) ||
        (rc = ggfit__gguf_check_target(out_path, &path_in, 1, force, err)))
        return rc;

    struct stat st_in;
    size_t len = strlen(out_path);
    char *tmp = ggfit__malloc(len + 16);
    unsigned char *buf = ggfit__malloc(COPY_CHUNK);
    FILE *in = NULL;
    out o = {0};
    int fd = -1;
    if (!tmp || !buf) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(tmp, out_path, len);
    memcpy(tmp + len, ".tmp.XXXXXX", 12);
    if (!(in = fopen(s.path, "rb"))) {
        rc = ggfit__fail(err, GGFIT_EIO, "%s: cannot open: %s", s.path, strerror(errno));
        goto done;
    }
    /* mkstemp makes it 0600: give it the input's permissions. */
    if ((fd = mkstemp(tmp)) < 0 ||
        (stat(s.path, &st_in) == 0 && fchmod(fd, st_in.st_mode & 0777) != 0) ||
        !(o.f = fdopen(fd, "wb"))) {
        rc = ggfit__fail(err, GGFIT_EIO, "%s: cannot create a file beside it: %s", out_path,
                         strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        fd = -1;
        goto done;
    }

    /* The header as it was up to the tensor infos (magic, version, counts,
     * key/values), then the infos in the new order with new offsets. */
    put(&o, s.header, s.kv_end);
    uint64_t offset = 0;
    for (uint64_t k = 0; k < s.n_tensors; k++) {
        const ggfit_tensor_info *t = ggfit_gguf_tensor(g, order[k]);
        put_u64(&o, strlen(t->name));
        put(&o, t->name, strlen(t->name));
        put_u32(&o, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++)
            put_u64(&o, (uint64_t)t->ne[d]);
        put_u32(&o, t->type);
        put_u64(&o, offset);
        offset = GGFIT_PAD(offset + t->n_bytes, (uint64_t)s.alignment);
    }
    pad(&o, s.alignment);
    for (uint64_t k = 0; k < s.n_tensors && !o.failed; k++) {
        if ((rc = copy_tensor(in, &o, &s, ggfit_gguf_tensor(g, order[k]), buf, err)))
            break;
        pad(&o, s.alignment);
    }
    if (!rc && !o.failed && (fflush(o.f) != 0 || fsync(fileno(o.f)) != 0))
        o.failed = true;
    if (fclose(o.f) != 0)
        o.failed = true;
    if (!rc && o.failed)
        rc = ggfit__fail(err, GGFIT_EIO, "%s: write failed: %s", out_path, strerror(errno));
    else if (rc == GGFIT_EIO && o.failed && err && !*err)
        rc = ggfit__fail(err, GGFIT_EIO, "%s: write failed: %s", out_path, strerror(errno));
    if (!rc && rename(tmp, out_path) != 0)
        rc = ggfit__fail(err, GGFIT_EIO, "%s: cannot rename the finished file into place: %s",
                         out_path, strerror(errno));
    if (rc)
        unlink(tmp);
done:
    if (in)
        fclose(in);
    free(tmp);
    free(buf);
    return rc;
}
