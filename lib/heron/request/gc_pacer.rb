# frozen_string_literal: true

module Heron
  class Request
    # Keeps the garbage of a streamed upload bounded. A String the app drops is freed only when
    # the GC sweeps its slot, and Ruby sweeps lazily, as new objects need slots; an upload read
    # with `read(16384)` or `each` makes few objects and a lot of malloc'd memory, so dropped
    # pieces pile up far past the GC's malloc limit (a 300 MiB upload read that way raised the
    # server's peak RSS by about 100 MiB). After every `every` bytes handed to the app as new
    # Strings, the pacer runs a minor GC that sweeps at once, as Ruby would with a smaller
    # malloc limit (RUBY_GC_MALLOC_LIMIT_MAX=8 MiB gave a similar flat curve).
    # `read(n, buffer)` hands out no new Strings and never triggers it. One pacer counts for all of
    # a reactor thread's requests (Server::Context#gc_pacer): a collection sweeps every upload's
    # garbage, and one pacer per upload let ten concurrent ones, in step, pile up ten times
    # `every` before their collections came, all at once.
    class GCPacer
      # Bytes handed out between collections: 4 MiB kept a 100 MiB upload read in 16 KiB pieces
      # within about 10 MiB of peak RSS (8 MiB: about 16), at one minor GC per 4 MiB read.
      EVERY = 4 * 1024 * 1024

      # @param every [Integer] bytes handed out between collections.
      def initialize(every = EVERY)
        @every = every
        @since = 0
      end

      # Records bytes given to the app in new Strings; collects when `every` has been reached.
      # @param bytes [Integer]
      # @return [void]
      def handed_out(bytes)
        @since += bytes
        return if @since < @every
        @since = 0
        GC.start(full_mark: false, immediate_sweep: true)
      end
    end
  end
end
