/* files.h: writing output files safely, and naming them unambiguously.
 *
 * Every file bfsync writes (compile -o, run --output, a minimized seed)
 * goes through an AtomicFile: the bytes go to a temporary file in the same
 * folder, which is renamed over the destination only once it is complete
 * and closed. An interrupted or failed write leaves the previous file
 * whole, and two runs writing one file each leave one complete file, never
 * an interleaving. The replaced file keeps its mode (and owner, where the
 * user may set it), a symbolic link stays a link to the file it names, and
 * what is not a regular file (/dev/null, a pipe) is written in place, never
 * replaced. A file with other hard links is not replaced either, which
 * would cut it from them: once the new content is complete in the
 * temporary, it is copied into the file in place (the same inode), and the
 * temporary removed after. That last copy is the one step that is not
 * atomic, the documented choice: a failure or a signal during it leaves
 * the complete new content in the temporary (which is not removed then,
 * and the message names it). */
#ifndef FILES_H
#define FILES_H

#include <stdbool.h>
#include <stdio.h>

typedef struct AtomicFile {
  FILE *f;           /* write here */
  const char *path;  /* the destination, as given */
  char *target;      /* path with its symbolic links followed, malloc'ed */
  char *tmp;         /* the temporary file beside target, malloc'ed; NULL when
                        the destination is written in place */
  bool linked;       /* target has other hard links: tmp is copied into it */
  char error[512];   /* why atomic_open or atomic_commit failed */
} AtomicFile;

/* Start writing path. 0, or -1 with the reason (strerror) in af->error. */
int atomic_open(AtomicFile *af, const char *path);
/* Finish: flush, close, rename over the destination. 0, or -1 with the
 * reason in af->error (the temporary file removed, the destination as it was). */
int atomic_commit(AtomicFile *af);
/* Give up: close and remove the temporary file. */
void atomic_abort(AtomicFile *af);

/* A temporary file (path kept as given, not copied) that a SIGINT or
 * SIGTERM ending the process removes, until temporary_forget(path).
 * Every AtomicFile's temporary is tracked; at most 8 at a time. */
void temporary_track(char *path);
void temporary_forget(const char *path);

/* Whether two paths name the same file (existing or not): the same inode,
 * or the same folder and name. */
bool same_file(const char *a, const char *b);

/* The whole of f, malloc'ed and NUL-terminated (len bytes before the NUL),
 * or NULL with errno set (EFBIG past limit bytes, found after reading at
 * most one byte more). Works on pipes too. */
char *read_all(FILE *f, size_t limit, size_t *len);

#endif
