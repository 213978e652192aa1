/* lsp.h: the language server's pieces (docs/lsp.md). driver/cmd_lsp.c
 * speaks the protocol (framing, JSON-RPC, documents, limits);
 * driver/lsp_analysis.c answers from the compiler (diagnostics, hover,
 * definition, inlay hints), always in a child process that the server can
 * bound in time and memory. */
#ifndef DRIVER_LSP_H
#define DRIVER_LSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

/* An open document. */
typedef struct LspDoc {
  char *uri;
  char *path; /* the file the uri names (file://), else the uri itself */
  char *text;
  size_t len;
  int64_t version;
} LspDoc;

/* A position as the protocol counts it: 0-based line, and character in
 * UTF-16 code units, or in bytes when the client chose utf-8. */
typedef struct LspPos {
  int64_t line, character;
} LspPos;

typedef struct LspConfig {
  bool utf8;        /* positionEncoding "utf-8" (else "utf-16") */
  int sync;         /* SyncMode of the inlay hints (initializationOptions.sync) */
} LspConfig;

/* The byte offset of a position in the document (clamped to its lines). */
size_t lsp_offset(const LspConfig *c, const LspDoc *d, LspPos pos);
/* Each writes one JSON value with w: publishDiagnostics' params; a hover
 * or null; a location or null; an array of inlay hints in [from, to]. */
void lsp_diagnostics(const LspConfig *c, const LspDoc *d, JsonWriter *w);
void lsp_hover(const LspConfig *c, const LspDoc *d, LspPos at, JsonWriter *w);
void lsp_definition(const LspConfig *c, const LspDoc *d, LspPos at, JsonWriter *w);
void lsp_inlay_hints(const LspConfig *c, const LspDoc *d, LspPos from, LspPos to, JsonWriter *w);

#endif
