# frozen_string_literal: true

# Builds Heron's core C classes: Heron::HTTPParser, Heron::Response::Head,
# Heron::Connection::IdleSet, Heron::Connection::StackScrub, Heron::Connection::ReadBuffer,
# Heron::Log::RequestId, Heron::Server::EnvTemplate, Heron::WebSocket::Mask, Heron::HTTP2::Decoder,
# Heron::HTTP2::Encoder, Heron::HTTP2::RequestFields and Heron::HTTP2::FrameReader (heron_ext.c
# lists them). The profiler's are in heron-profiler/ext/heron_profiler (the heron-profiler gem).
#
# Environment:
#   HERON_SANITIZE=address            build with AddressSanitizer (+ UndefinedBehaviorSanitizer)
#   HERON_SANITIZE=address,undefined  any comma list of -fsanitize= values
# An ASan build needs the runtime loaded first, e.g.
#   HERON_SANITIZE=address bundle exec rake compile
#   LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
#     bundle exec ruby -Ilib -Itest test/heron/http_parser/headers_test.rb
require "mkmf"

require_relative "compiler_flags"
# A function shared between files is declared in a header (each C class's header declares its
# Init_): one defined without a prototype in sight is a warning.
$CFLAGS << " -Wmissing-prototypes"

# Ruby >= 3.0: deduplicated frozen strings for env keys built at run time.
have_func("rb_interned_str", "ruby.h")
# A Hash made with room for a whole env (Heron::Server::EnvTemplate.with_room): public from Ruby
# 3.2, exported but undeclared in 3.1.
have_func("rb_hash_new_capa", "ruby.h") || have_func("rb_hash_new_with_size", "ruby.h")
# Linux: epoll for Heron::Connection::IdleSet (elsewhere idle connections are not parked).
have_header("sys/epoll.h")

create_makefile("heron/heron_ext")
