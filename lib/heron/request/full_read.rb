# frozen_string_literal: true

module Heron
  class Request
    # `read(length)` as IO#read has it, for every `rack.input`: with a length it returns that many
    # bytes, fewer only at the end of the body. Rack's own form parsing (`read(limit + 2)`) and
    # Rails' `raw_post` (`read(content_length)`) take one read for the whole body; a read that
    # returned only what had arrived handed them a truncated form. The including class supplies
    # `read_part(length, buffer)`: what has arrived, at least one byte, at most `length`, nil at
    # the end (what streaming readers inside Heron use, so they never wait for a full length);
    # and may supply `handed_out(bytes)`, told of the bytes a read adds to a new String beyond its
    # first part (the GC pacer, Request::GCPacer, counts what the app is handed).
    module FullRead
      # Reads like IO#read: all of the rest when `length` is nil, else `length` bytes, fewer only at
      # the end of the body.
      # @param length [Integer, nil]
      # @param buffer [String, nil] filled with the result when given (its memory reused).
      # @return [String, nil] binary data; nil at the end of the body when a positive length was asked.
      def read(length = nil, buffer = nil)
        data = read_part(length, buffer)
        return data if length.nil? || data.nil? || data.bytesize >= length
        fill_up(data, length, fresh: buffer.nil?)
      end

      # What has arrived, at most `length` bytes, as IO#readpartial: for streaming readers.
      # @param length [Integer]
      # @param buffer [String, nil]
      # @return [String]
      # @raise [EOFError] at the end of the body.
      def readpartial(length, buffer = nil)
        read_part(length, buffer) or raise EOFError, "end of request body"
      end

      private

      # Appends further parts until `data` holds `length` bytes or the body ends, through one
      # String kept for it (a body read into a reused buffer allocates nothing per read). The
      # bytes appended to a new String are handed out too (`fresh`): uncounted, a body arriving
      # in pieces and read with read(16 KiB) piled up garbage the pacer never collected.
      def fill_up(data, length, fresh:)
        data = data.dup if data.frozen?
        first = data.bytesize
        more = (@full_read_part ||= String.new(encoding: Encoding::BINARY))
        data << more while data.bytesize < length && read_part(length - data.bytesize, more)
        handed_out(data.bytesize - first) if fresh
        data
      end

      # Told of body bytes handed out in new Strings; an input with a GC pacer counts them.
      def handed_out(_bytes) = nil
    end
  end
end
