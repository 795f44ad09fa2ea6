# frozen_string_literal: true

require "stringio"
require "tempfile"
require_relative "gc_pacer"
require_relative "full_read"

module Heron
  class Request
    # A `rack.input` that can {#rewind} (Rack 2's SPEC requires it; `rewindable_input true` turns
    # it on). It wraps the streaming {Input}: the socket is still read only as far as the app reads,
    # and every byte read is also kept, in memory up to `threshold` bytes, past that in an unlinked
    # Tempfile (as Puma does), so memory stays bounded whatever the body's size. The connection
    # calls {#close} once the request is done, which frees the memory or the file.
    class RewindableInput
      include FullRead

      READ_CHUNK = 16 * 1024
      private_constant :READ_CHUNK

      # @param source [Input] the streaming body.
      # @param threshold [Integer] bytes kept in memory before the body moves to a Tempfile.
      def initialize(source, threshold:)
        @source = source
        @threshold = threshold
        @store = StringIO.new(String.new(encoding: Encoding::BINARY))
        @stored = 0
        @pos = 0
        @eof = false
        @chunk = String.new(capacity: READ_CHUNK, encoding: Encoding::BINARY)
        @pacer = Request::GCPacer.new
      end

      # What is there of the body, without waiting for `length` bytes (see FullRead#read): all of
      # the rest when `length` is nil, else at least one byte and at most `length`.
      # @param length [Integer, nil]
      # @param buffer [String, nil] filled with the result when given.
      # @return [String, nil] binary data; nil at end of body when a positive length was asked.
      def read_part(length = nil, buffer = nil)
        return read_rest(buffer) unless length
        return buffer ? buffer.replace(+"".b) : +"".b if length.zero?
        fetch if @pos == @stored
        return buffer&.clear && nil if @pos == @stored
        stored_data(fresh: buffer.nil?) { @store.read([length, @stored - @pos].min, buffer) }
      end

      # @return [String, nil] the next line including its "\n", or nil at the end of the body.
      def gets
        line = nil
        loop do
          fetch if @pos == @stored
          return line if @pos == @stored
          part = stored_data(fresh: true) { @store.gets }
          line = line ? line << part : part
          return line if line.end_with?("\n")
        end
      end

      # Yields the body in chunks.
      # @yieldparam chunk [String]
      def each
        while (chunk = read_part(READ_CHUNK))
          yield chunk
        end
      end

      # Starts reading from the beginning of the body again.
      # @return [Integer] 0
      def rewind
        @pos = 0
      end

      # Frees what was kept (the memory or the Tempfile); later reads raise IOError.
      # @return [nil]
      def close
        @store.close unless @store.closed?
        nil
      end

      # Closes once the request is done with: at once, or after the request's callbacks when it
      # has some (`rack.response_finished` / `rack.after_reply` may read the body too).
      # @param env [Hash] the request's env.
      # @return [void]
      def close_after(env)
        callbacks = env["rack.after_reply"]
        pending = [callbacks, env["rack.response_finished"]].any? { |list| list.is_a?(Array) && !list.empty? }
        pending && callbacks.is_a?(Array) ? callbacks << -> { close } : close
      end

      # @return [Boolean] whether the whole body has been read from the socket.
      def finished? = @source.finished?

      # Gives back the body memory a whole read held (see Input#release).
      # @return [void]
      def release = @source.release

      # @return [Boolean] whether a read has been attempted.
      def read_started? = @source.read_started?

      # @return [Boolean] whether the body is kept in a Tempfile (it grew past the threshold).
      def spooled? = @store.is_a?(File)

      # Reads and drops what is left of the body on the socket (see {Input#discard}).
      # @param max [Integer]
      # @return [Boolean]
      def discard(max) = @source.discard(max)

      private

      # Past `threshold`, the rest is held against the thread's body memory (Input#hold) while the
      # request lasts: received into the Tempfile first, read into memory once there is room.
      def read_rest(buffer)
        fetch until @eof
        @source.hold(@stored - @pos)
        stored_data(fresh: buffer.nil?) { @store.read(nil, buffer) }
      end

      # Runs a read on the store at the current position and moves past what it returned; a new
      # String (no buffer given) is counted for the GC pacer.
      def stored_data(fresh:)
        @store.pos = @pos
        data = yield
        return data unless data
        @pos += data.bytesize
        handed_out(data.bytesize) if fresh
        data
      end

      def handed_out(bytes) = @pacer.handed_out(bytes)

      # Reads the next piece of the body from the socket and keeps it (through one reused
      # String, so a large body costs no garbage on the way to the Tempfile).
      def fetch
        return if @eof
        return @eof = true unless @source.read_part(READ_CHUNK, @chunk)
        spool if @store.is_a?(StringIO) && @stored + @chunk.bytesize > @threshold
        @store.pos = @stored
        @stored += @store.write(@chunk)
      end

      # Moves the body kept so far into a Tempfile, unlinked at once so it never outlives the
      # process.
      def spool
        file = Tempfile.create("heron-body")
        File.unlink(file.path)
        file.binmode
        file.write(@store.string)
        @store = file
      end
    end
  end
end
