#!/usr/bin/env bash
# build.sh builds the Ollama inference server (llama.cpp inside) used by mtkit's
# end-to-end tests, from the Go module proxy, and caches the binary.
#
# Usage: scripts/ollama/build.sh        prints the path of the ollama binary on stdout
#
# Environment:
#   MTKIT_CACHE           cache root (default $HOME/.cache/mtkit)
#   MTKIT_OLLAMA_VERSION  module version to build (default v0.17.4)
#   MTKIT_OLLAMA_CFLAGS   C/C++ flags (default "-O3 -march=x86-64-v3"; without
#                         -march prefill is about 10x slower)
#
# The binary lands in $MTKIT_CACHE/ollama-$VERSION/bin/ollama and is reused when a
# stamp file records the same version and flags. A cold build takes about 4-5
# minutes on 2 cores and 0.7 GB of memory; everything here is idempotent.
set -euo pipefail

version="${MTKIT_OLLAMA_VERSION:-v0.17.4}"
cflags="${MTKIT_OLLAMA_CFLAGS:--O3 -march=x86-64-v3}"
cache="${MTKIT_CACHE:-$HOME/.cache/mtkit}"
dir="$cache/ollama-$version"
bin="$dir/bin/ollama"
stamp="$dir/stamp"
want="version=$version cflags=$cflags go=$(go env GOVERSION)"

log() { printf 'ollama/build.sh: %s\n' "$*" >&2; }

if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
	printf '%s\n' "$bin"
	exit 0
fi

# Debian build dependencies: headers llama.cpp's vendored tree expects but the
# module zip does not carry.
missing=()
[[ -f /usr/include/nlohmann/json.hpp ]] || missing+=(nlohmann-json3-dev)
[[ -f /usr/include/stb/stb_image.h ]] || missing+=(libstb-dev)
command -v g++ >/dev/null || missing+=(g++)
if ((${#missing[@]})); then
	log "installing ${missing[*]}"
	sudo=()
	[[ $(id -u) -eq 0 ]] || sudo=(sudo)
	"${sudo[@]}" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

mkdir -p "$dir/include/miniaudio"
# Stub for miniaudio.h: mtmd-helper.cpp decodes audio inputs with miniaudio, which
# the module zip drops. mtkit never sends audio, so every decoder call fails
# cleanly ("not a valid audio file") instead of pulling in 90k lines of C.
cat >"$dir/include/miniaudio/miniaudio.h" <<'EOF'
/* miniaudio.h stub written by mtkit's scripts/ollama/build.sh: audio decoding disabled. */
#ifndef MTKIT_MINIAUDIO_STUB_H
#define MTKIT_MINIAUDIO_STUB_H
#include <stddef.h>
typedef int ma_result;
typedef unsigned long long ma_uint64;
typedef unsigned int ma_uint32;
typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;
typedef enum { ma_encoding_format_unknown = 0, ma_encoding_format_wav } ma_encoding_format;
#define MA_SUCCESS 0
#define MA_NOT_IMPLEMENTED (-29)
typedef struct { ma_format format; ma_uint32 channels; ma_uint32 sampleRate; } ma_decoder_config;
typedef struct { int unused; } ma_decoder;
static inline ma_decoder_config ma_decoder_config_init(ma_format f, ma_uint32 ch, ma_uint32 sr) {
	ma_decoder_config c; c.format = f; c.channels = ch; c.sampleRate = sr; return c;
}
static inline ma_result ma_decoder_init_memory(const void *d, size_t n, const ma_decoder_config *c, ma_decoder *dec) {
	(void)d; (void)n; (void)c; (void)dec; return MA_NOT_IMPLEMENTED;
}
static inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *dec, ma_uint64 *n) {
	(void)dec; if (n) *n = 0; return MA_NOT_IMPLEMENTED;
}
static inline ma_result ma_decoder_read_pcm_frames(ma_decoder *dec, void *out, ma_uint64 n, ma_uint64 *read) {
	(void)dec; (void)out; (void)n; if (read) *read = 0; return MA_NOT_IMPLEMENTED;
}
static inline ma_result ma_decoder_uninit(ma_decoder *dec) { (void)dec; return MA_SUCCESS; }
#endif
EOF

log "building github.com/ollama/ollama@$version (cold build takes minutes)"
start=$(date +%s)
rm -f "$stamp"
cd "$dir"
CGO_ENABLED=1 \
	CGO_CPPFLAGS="-I$dir/include ${CGO_CPPFLAGS:-}" \
	CGO_CFLAGS="$cflags" \
	CGO_CXXFLAGS="$cflags" \
	GOFLAGS= GOWORK=off \
	GOBIN="$dir/bin" \
	go install "github.com/ollama/ollama@$version" >&2
printf '%s' "$want" >"$stamp"
log "built $bin in $(($(date +%s) - start)) s"
printf '%s\n' "$bin"
