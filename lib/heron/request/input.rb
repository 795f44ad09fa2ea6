# frozen_string_literal: true

require_relative "gc_pacer"
require_relative "../timeout_error"
require_relative "body_spool"
require_relative "full_read"

module Heron
  class Request
    # `rack.input`: the request body, streamed from the socket as the app reads it (never read
    # whole before the app runs). Handles Content-Length and chunked bodies, the body-size limit,
    # the body read timeout, and a hook run on the first read (used to send `100 Continue`).
    class Input
      include FullRead

      # Raised when a body grows past `max_body_size`; the connection answers 413.
      class TooLarge < StandardError
        # @return [Integer] the HTTP status this maps to.
        def status = 413
      end

      # Raised when the client closes the connection before the body is complete.
      class Incomplete < EOFError
        # @return [Integer] the HTTP status this maps to.
        def status = 400
      end

      # Positional, not keywords: made for every request, and keywords passed through Class#new
      # cost a Hash each on Ruby 3.1.
      # @param socket [Connection::BufferedSocket, nil] the connection's socket; body bytes may
      #   already be buffered. nil (and parser nil) for an empty body, which reads nothing.
      # @param parser [Heron::HTTPParser, nil] decodes chunked bodies.
      # @param length [Integer, nil] the Content-Length, or nil for a chunked body.
      # @param config [#max_body_size, #body_timeout] the most body bytes accepted (nil: no limit) and
      #   the seconds to wait for the next body bytes.
      # @param on_first_read [#call, nil] called once, with this input, before the first read.
      # @param pace [Connection::BodyPace, nil] does the waiting instead, when given (minimum rate).
      # @param pacer [Request::GCPacer, nil] told of body bytes handed out as new Strings; shared
      #   by the thread's requests (Server::Context#gc_pacer), else one of its own, made when needed.
      # @param budget [Server::BodyBudget, nil] when given, a read of the whole body past its
      #   threshold is spooled first and waits for room in it (`body_memory_limit`).
      def initialize(socket, parser, length, config, on_first_read = nil, pace = nil, pacer = nil, budget = nil)
        @socket = socket
        @parser = parser
        @remaining = length
        @limit = config.max_body_size
        @timeout = config.body_timeout
        @on_first_read = on_first_read
        @pace = pace
        @pacer = pacer
        @budget = budget
        @held = nil
        @done = length&.zero?
        @pending = @done ? NOTHING : String.new # binary; most requests have no body, and share NOTHING
        @received = 0
      end

      # What has arrived of the body, without waiting for `length` bytes (see FullRead#read): all
      # of the rest when `length` is nil, else at least one byte and at most `length`.
      # @param length [Integer, nil]
      # @param buffer [String, nil] filled with the result when given.
      # @return [String, nil] binary data; nil at end of body when a positive length was asked.
      def read_part(length = nil, buffer = nil)
        first_read
        return read_into(length, buffer) if buffer && length&.positive? && @pending.empty?
        return read_fresh(length) if @remaining && !buffer && length&.positive? && @pending.empty?
        data = length ? read_some(length) : read_rest
        return data unless buffer
        data.nil? ? buffer.clear && nil : buffer.replace(data)
      end

      # @return [String, nil] the next line including its "\n", or nil at the end of the body.
      def gets
        first_read
        scanned = 0
        until (index = @pending.index(NEWLINE, scanned)) || @done
          scanned = @pending.bytesize # a long line is scanned once, not again after every read
          fill_pending
        end
        return take(index + 1) if index
        @pending.empty? ? nil : take(@pending.bytesize)
      end

      # Yields the body in chunks as it arrives.
      # @yieldparam chunk [String]
      def each
        while (chunk = read_part(READ_CHUNK))
          yield chunk
        end
      end

      # Rack 3 allows the app to close the input; later reads see the end of the body.
      def close
        nil
      end

      # Counts `bytes` of body the app holds against the thread's body memory, waiting for room
      # (see Server::BodyBudget), until {#release}. Nothing without a budget or at or under its
      # threshold.
      # @param bytes [Integer]
      # @return [void]
      def hold(bytes)
        return unless @budget && bytes > @budget.threshold
        @held = (@held || 0) + @budget.acquire(bytes)
      end

      # Gives back what {#hold} counted; the connection calls it once the response is written.
      # @return [void]
      def release
        return unless @held
        @budget.release(@held)
        @held = nil
      end

      # @return [Boolean] whether the app has read (or the server has drained) the whole body.
      def finished?
        @done && @pending.empty?
      end

      # @return [Boolean] whether a read has been attempted.
      def read_started?
        @on_first_read.nil?
      end

      # Reads and drops what is left of the body, up to `max` more bytes.
      # @param max [Integer]
      # @return [Boolean] true when the body ended within `max`, false otherwise.
      def discard(max)
        return true if finished? # nothing left: a finished (or empty, frozen) input is not touched
        @on_first_read = nil
        @limit = nil
        dropped = 0
        while !finished? && dropped <= max
          fill_pending
          dropped += @pending.bytesize
          @pending.clear
        end
        finished?
      rescue Incomplete, Heron::TimeoutError
        false
      end

      READ_CHUNK = 16 * 1024
      # Read from the socket at a time while a body read whole is spooled: 400 reads and pwrites
      # per 100 MiB instead of 6,400 at READ_CHUNK.
      SPOOL_CHUNK = 256 * 1024
      # Most capacity reserved up front for a body read whole: a Content-Length within
      # max_body_size, but unbounded when the limit is off.
      RESERVE = 128 * 1024 * 1024
      # Binary like the body, so String#index does not re-scan the whole body to compare encodings.
      NEWLINE = "\n".b.freeze
      # The pending bytes of an empty body, which never get any: shared, not allocated per request.
      NOTHING = "".b.freeze
      private_constant :READ_CHUNK, :SPOOL_CHUNK, :RESERVE, :NEWLINE, :NOTHING

      private

      def first_read
        return unless @on_first_read
        hook = @on_first_read
        @on_first_read = nil
        hook.call(self)
      end

      def read_some(length)
        return +"".b if length.zero?
        fill_pending while @pending.empty? && !@done
        @pending.empty? ? nil : take([length, @pending.bytesize].min)
      end

      # Reads into the caller's buffer, reusing its memory: straight from the socket for a
      # Content-Length body, decoded in place for a chunked one. This is the way to stream an upload
      # without allocating per read, so memory stays flat whatever the body's size.
      def read_into(length, buffer)
        return buffer.clear && nil if @done
        buffer.force_encoding(Encoding::BINARY)
        @remaining ? fixed_into(length, buffer) : chunked_into(length, buffer)
        buffer.empty? ? nil : buffer
      end

      # read(n) of a Content-Length body: a new String read straight from the socket, of at most
      # READ_CHUNK bytes (Rack lets read(n) return fewer than n), so it is the only object made.
      def read_fresh(length)
        data = read_into([length, READ_CHUNK].min, String.new) # binary; no keyword Hash to allocate
        handed_out(data.bytesize) if data
        data
      end

      def fixed_into(length, buffer)
        max = [length, @remaining].min
        arrived(@pace ? @pace.read_into(@socket, max, buffer) : @socket.read_into(max, buffer, @timeout))
        @remaining -= buffer.bytesize
        @done = @remaining.zero?
        count(buffer.bytesize)
      end

      # Decodes into the buffer; what goes past `length` (possible only from bytes that came with
      # the head) waits in @pending for the next read.
      def chunked_into(length, buffer)
        buffer[0..] = "" # empties it and keeps its memory (String#clear would free it)
        @done = decode_into(length, buffer) while !@done && buffer.empty?
        count(buffer.bytesize)
        return if buffer.bytesize <= length
        @pending << buffer.byteslice(length, buffer.bytesize - length)
        buffer[length..] = ""
      end

      def read_rest
        return spooled_rest if @budget && !@done && (@remaining.nil? || @pending.bytesize + @remaining > @budget.threshold)
        return fixed_rest if @remaining && !@done
        fill_pending until @done
        take(@pending.bytesize)
      end

      # The rest of a body that may be larger than the budget's threshold, read whole: received
      # into a BodySpool (a Tempfile past the threshold) in pieces, so memory stays flat while it
      # arrives however many do at once, then read into one String once the budget has room for it.
      def spooled_rest
        spool = Request::BodySpool.new(@budget.threshold)
        chunk = String.new(capacity: SPOOL_CHUNK, encoding: Encoding::BINARY)
        spool.write(chunk) while read_part(SPOOL_CHUNK, chunk)
        hold(spool.size)
        data = spool.read
        handed_out(data.bytesize)
        data
      ensure
        spool&.close
      end

      # A Content-Length body read whole: one String made with the capacity of the rest of the body
      # (up to RESERVE) and filled through the connection's read buffer, so reading it allocates no
      # piece per read and never reallocates, and holds no memory beyond the body itself.
      def fixed_rest
        data = String.new(capacity: @pending.bytesize + [@remaining, RESERVE].min, encoding: Encoding::BINARY)
        data << @pending
        @pending.clear
        append_fixed(data) until @done
        handed_out(data.bytesize)
        data
      end

      def append_fixed(data)
        got = arrived(@pace ? @pace.append_to(@socket, @remaining, data) : @socket.append_to(data, @remaining, @timeout))
        @remaining -= got
        @done = @remaining.zero?
        count(got)
      end

      # Tells the GC pacer (the thread's, else made on first use: most requests have no body) of
      # body bytes given to the app; nothing for none (an empty body's input is frozen).
      def handed_out(bytes)
        (@pacer ||= Request::GCPacer.new).handed_out(bytes) if bytes.positive?
      end

      def take(length)
        handed_out(length)
        return String.new if @pending.equal?(NOTHING) # binary
        return @pending.slice!(0, length) if length < @pending.bytesize
        data = @pending
        @pending = String.new # binary; no keyword Hash to allocate
        data
      end

      def fill_pending
        before = @pending.bytesize
        @remaining ? fill_fixed : fill_chunked
        count(@pending.bytesize - before)
      end

      def fill_fixed
        wait_for_bytes if !@socket.buffered?
        taken = @socket.consume([@remaining, @socket.buffered_bytes].min)
        @pending.empty? ? @pending = taken : @pending << taken
        @remaining -= taken.bytesize
        @done = @remaining.zero?
      end

      def fill_chunked
        before = @pending.bytesize
        @done = decode_into(READ_CHUNK, @pending) while !@done && @pending.bytesize == before
      end

      # Decodes chunked body data into `out`: the bytes buffered, else up to `max` bytes read from
      # the socket and decoded as they are, so the body's bytes are copied once, not first into
      # the connection's buffer. Reading no more than `max` raw bytes decodes no more than `max`.
      # @return [Boolean] whether the body's last chunk was decoded.
      def decode_into(max, out)
        unless @socket.buffered?
          arrived(@pace ? @pace.fill_decoded(@socket, @parser, out, max) : @socket.fill_decoded(@parser, out, max, @timeout))
        end
        @socket.decode_chunked(@parser, out) # what is buffered; else only whether the body ended
      end

      def wait_for_bytes
        arrived(@pace ? @pace.fill(@socket) : @socket.fill(@timeout))
      end

      # A read's result, or Incomplete when it got nil: the client closed the connection.
      def arrived(got) = got || raise(Incomplete, "client closed the connection mid-body")

      def count(bytes)
        @received += bytes
        raise TooLarge, "request body exceeds #{@limit} bytes" if @limit && @received > @limit
      end
    end
  end
end
