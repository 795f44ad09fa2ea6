# frozen_string_literal: true

require "json"
require "socket"
require "tmpdir"
require "fileutils"
require_relative "peers/listener"
require_relative "clock"

module Heron
  module Profiler
    # The workers of one cluster, as seen by the profiler: each worker answers questions about
    # its own {Store} on a unix socket `<dir>/<pid>.sock` ({Listener}), and any worker's
    # dashboard asks the others through {#find} and {#recent}. Nothing is copied on the request
    # path: a record stays in the worker that measured it until somebody asks for it.
    #
    # The directory is `<tmpdir>/heron-profiler-<uid>-<master pid>`, mode 0700, and is refused
    # when it exists with other owners or modes (another user could otherwise plant sockets
    # there). A record id starts with the measuring worker's pid (`<pid base 36>-<n>`), so a
    # lookup asks exactly one peer; the index asks them all. A peer that does not answer within
    # {TIMEOUT} seconds (dead, stopping, or busy) is left out, never waited for longer.
    class Peers
      TIMEOUT = 2.0
      # Longest answer read from a peer (a record with 1,000 queries of 2 KiB SQL is about 2 MiB).
      MAX_ANSWER = 32 * 1024 * 1024

      # @return [String] the directory holding the workers' sockets.
      attr_reader :path

      # @param master [Integer] the cluster master's pid, which names the directory.
      # @param root [String] where the directory is made.
      def initialize(master, root: Dir.tmpdir)
        @master = master
        @path = File.join(root, "heron-profiler-#{Process.uid}-#{master}")
      end

      # Worker: starts answering for its own records (once per process; again in a forked child).
      # @param records [Records, Store] this worker's records (#find, #recent, #export_routes).
      # @return [Listener] the running listener.
      def serve(records)
        return @listener if @listener&.pid == Process.pid
        prepare
        @listener = Listener.new(socket_for(Process.pid), records).start
      end

      # @param id [String] a record id.
      # @return [Hash, nil] the record from the worker that measured it (string keys), nil when
      #   that worker is this one, gone, or does not have it.
      def find(id)
        pid = Integer(id.to_s[/\A[0-9a-z]+(?=-)/].to_s, 36)
        return nil if pid == Process.pid || !File.socket?(socket_for(pid))
        ask(socket_for(pid), "find #{id}")
      rescue ArgumentError
        nil
      end

      # @param limit [Integer] at most this many from each peer.
      # @return [Array<Hash>] the other workers' recent records (string keys, without queries).
      def recent(limit)
        others.flat_map { |socket| Array(ask(socket, "recent #{limit.to_i}")) }
      end

      # @return [Array<Array<Hash>>] each other worker's per-route figures (see {RouteStats#export}).
      def routes
        others.filter_map { |socket| ask(socket, "routes") }
      end

      # Removes the directory (the master, on exit).
      # @return [void]
      def remove
        FileUtils.rm_rf(@path)
      end

      private

      def others
        own = socket_for(Process.pid)
        Dir.glob(File.join(@path, "*.sock")).reject { |socket| socket == own }
      end

      def socket_for(pid)
        File.join(@path, "#{pid}.sock")
      end

      def prepare
        Dir.mkdir(@path, 0o700)
      rescue Errno::EEXIST
        stat = File.lstat(@path)
        return if stat.directory? && stat.owned? && (stat.mode & 0o077).zero?
        raise Errno::EACCES, "#{@path} is not a private directory of this user; not sharing profiler records"
      end

      def ask(socket, question)
        UNIXSocket.open(socket) do |io|
          io.write("#{question}\n")
          io.close_write
          answer = read_answer(io)
          answer && JSON.parse(answer)
        end
      rescue SystemCallError, IOError, JSON::ParserError
        nil
      end

      def read_answer(io)
        answer = +""
        deadline = Clock.now + TIMEOUT
        loop do
          chunk = io.read_nonblock(65_536, exception: false)
          return answer if chunk.nil?
          next answer << chunk unless chunk == :wait_readable
          left = deadline - Clock.now
          return nil if left <= 0 || !io.wait_readable(left) || answer.bytesize > MAX_ANSWER
        end
      end
    end
  end
end
