# frozen_string_literal: true

require "async/notification"

module Heron
  class Server
    # The memory a reactor thread's apps may hold in request bodies read whole. An app that calls
    # `rack.input.read` with no length holds the whole body in one String until it returns, and
    # under fiber concurrency every upload in flight is in the app at once: 16 concurrent 100 MiB
    # uploads held 1.6 GiB. A whole-body read past `threshold` bytes is first spooled to a Tempfile
    # (see Request::BodySpool), then waits here, in arrival order, until its size fits under
    # `limit` bytes with the bodies already held (one body larger than the limit runs alone), and
    # counts until its response is written. Reads in pieces never come here.
    #
    # A released body is garbage the GC has not freed yet, and the bodies read next would join it:
    # a read that had to wait for room, once a quarter of `limit` has been released since the
    # last collection, runs a full one before it reads (a body held across a few minor
    # collections is old, which only a full one frees), so the memory held stays near `limit`
    # (+25%), not twice it. A read that found room at once does not (a full collection cost
    # 60-140 ms per 100 MiB upload read one at a time); Ruby's own `oldmalloc` limit (16 to
    # 128 MiB) starts full collections then.
    class BodyBudget
      # @return [Integer] bodies up to this many bytes are read into memory at once, uncounted.
      attr_reader :threshold
      # @return [Integer] bytes held now.
      attr_reader :held

      # @param limit [Integer] the most bytes held at once (`body_memory_limit`).
      # @param threshold [Integer] `body_spool_threshold`.
      def initialize(limit, threshold)
        @limit = limit
        @threshold = threshold
        @held = 0
        @released = 0
        @queue = []
        @changed = Async::Notification.new
      end

      # Waits (in the calling fiber) until `bytes` fit and the reads that came first have had
      # theirs, then counts them; {#release} gives them back.
      # @param bytes [Integer]
      # @return [Integer] bytes
      def acquire(bytes)
        @queue << (ticket = [bytes])
        waited = false
        until @queue.first.equal?(ticket) && fits?(bytes)
          waited = true
          @changed.wait
        end
        @held += bytes
        collect if waited && @released >= @limit / 4
        bytes
      ensure
        @queue.delete_if { |waiting| waiting.equal?(ticket) }
        @changed.signal # the next in line may fit too, or may now be first
      end

      # Gives back bytes counted by {#acquire}.
      # @param bytes [Integer]
      # @return [void]
      def release(bytes)
        @held -= bytes
        @released += bytes
        @changed.signal
      end

      # @return [Integer] whole-body reads waiting for room.
      def waiting = @queue.size

      private

      def collect
        @released = 0
        GC.start(full_mark: true, immediate_sweep: true)
      end

      def fits?(bytes) = @held.zero? || @held + bytes <= @limit
    end
  end
end
