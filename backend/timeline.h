/* timeline.h: a Chrome trace written by `bfsync run --trace` drawn as one
 * standalone SVG (backend/timeline.c; docs/runtime.md, "Timelines"). */
#ifndef TIMELINE_H
#define TIMELINE_H

#include <stdio.h>

typedef struct TimelineOptions {
  const char *title;   /* the heading */
  double time_scale;   /* drawn time = trace microseconds * time_scale */
  const char *unit;    /* of drawn time: "us", "cycles" */
} TimelineOptions;

/* Read the trace text (len bytes, named path in messages) and write its
 * SVG to out: 0, or -1 with one positioned message
 * (PATH:LINE:COL: error: ...) in err, errsize bytes, and nothing written. */
int timeline_draw(const char *path, const char *text, size_t len, const TimelineOptions *opt, FILE *out,
                  char *err, size_t errsize);

#endif
