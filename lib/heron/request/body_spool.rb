# frozen_string_literal: true

require "tempfile"

module Heron
  class Request
    # A request body on its way to being read whole while body memory is limited (see
    # Server::BodyBudget): kept in a String up to `threshold` bytes, past that in an unlinked
    # Tempfile, so a body waiting for its turn holds no more than `threshold` of memory.
    class BodySpool
      # @param threshold [Integer] bytes kept in memory before the body moves to a Tempfile.
      def initialize(threshold)
        @threshold = threshold
        @memory = String.new(encoding: Encoding::BINARY)
        @file = nil
        @size = 0
      end

      # @return [Integer] bytes written so far.
      attr_reader :size

      # @return [Boolean] whether the body went to a Tempfile.
      def spooled? = !@file.nil?

      # Appends a piece of the body.
      # @param data [String]
      # @return [void]
      def write(data)
        move_to_file if !@file && @size + data.bytesize > @threshold
        @file ? write_at(data, @size) : @memory << data
        @size += data.bytesize
      end

      # @return [String] the whole body, binary; the spool is closed.
      def read
        return @memory unless @file
        data = String.new(capacity: @size, encoding: Encoding::BINARY)
        @file.pread(@size, 0, data) # one read into the String's own memory; a short one is finished below
        data << @file.pread(@size - data.bytesize, data.bytesize) while data.bytesize < @size
        data
      ensure
        close
      end

      # Frees the Tempfile, if any.
      # @return [void]
      def close
        @file&.close
        @file = nil
      end

      private

      # An unnamed file (O_TMPFILE: no name to make, nothing to unlink) where the system has
      # them, else a Tempfile unlinked at once; either way gone when closed or the process ends.
      def move_to_file
        @file = unnamed_file || named_file
        @file.binmode
        write_at(@memory, 0)
        @memory = String.new(encoding: Encoding::BINARY)
      end

      # pwrite, not write (and pread in #read): under the fiber scheduler IO#write and IO#read
      # go through its hooks, which wrap each call in an IO::Buffer (an object per 16 KiB piece)
      # and copy; pwrite and pread make none.
      def write_at(data, offset)
        written = @file.pwrite(data, offset)
        written += @file.pwrite(data.byteslice(written, data.bytesize - written), offset + written) while written < data.bytesize
      end

      def unnamed_file
        return nil unless defined?(File::TMPFILE)
        File.open(Dir.tmpdir, File::TMPFILE | File::RDWR, 0o600)
      rescue SystemCallError # a file system without O_TMPFILE
        nil
      end

      def named_file
        file = Tempfile.create("heron-body")
        File.unlink(file.path)
        file
      end
    end
  end
end
