# frozen_string_literal: true

# The compiler flags both of Heron's extensions build with (ext/heron and, in the repository, heron-profiler/ext/heron_profiler):
# warnings on, and HERON_SANITIZE (see ext/heron/extconf.rb) for sanitizer builds. Loaded by
# their extconf.rb files after `require "mkmf"`.
$CFLAGS << " -O2 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers"

sanitize = ENV.fetch("HERON_SANITIZE", "").strip
unless sanitize.empty?
  sanitize = "address,undefined" if sanitize == "address"
  flags = " -fsanitize=#{sanitize} -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g"
  $CFLAGS << flags
  $LDFLAGS << flags
end
