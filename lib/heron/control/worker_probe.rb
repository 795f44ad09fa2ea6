# frozen_string_literal: true

require "socket"
require "tmpdir"
require "fileutils"
require_relative "backtraces"
require_relative "server"
require_relative "../clock"

module Heron
  module Control
    # How a cluster master gets its workers' backtraces for `/backtraces` and `heron ctl
    # backtraces`: before forking, the master makes a private directory (mode 0700); each worker
    # then answers on a Unix socket there (`<pid>.sock`), from a thread of its own, with
    # {Backtraces.render}. A thread rather than a signal handler, so a worker whose main thread
    # is busy in Ruby code still answers; the master waits {TIMEOUT} seconds per worker.
    module WorkerProbe
      TIMEOUT = 3.0

      class << self
        # @return [String, nil] the master's directory (inherited by forked workers).
        attr_reader :directory

        # Master, before forking: makes the directory.
        # @return [String]
        def prepare
          @directory = Dir.mktmpdir("heron-control-")
        end

        # Worker, after fork: closes the master's control listener it inherited, then answers on
        # `<directory>/<pid>.sock` until the process exits.
        # @param index [Integer] the worker's index, named in the answer.
        # @return [Thread, nil] nil when the master made no directory.
        def start(index)
          Server.close_inherited
          return nil unless @directory
          server = UNIXServer.new(File.join(@directory, "#{Process.pid}.sock"))
          Thread.new { answer(server, index) }.tap { |thread| thread.name = "heron backtraces" }
        end

        # Master: whether `expected` workers run and each has booted (answers on its socket).
        # @param pids [Array<Integer>] the live workers.
        # @param expected [Integer] how many there should be.
        # @return [Boolean]
        def booted?(pids, expected)
          !@directory.nil? && pids.size >= expected && pids.all? { |pid| File.socket?(File.join(@directory, "#{pid}.sock")) }
        end

        # Master: every worker's report, one after another.
        # @param pids [Array<Integer>]
        # @return [String]
        def collect(pids)
          pids.map { |pid| ask(pid) }.join
        end

        # Master: removes the directory.
        # @return [void]
        def remove
          FileUtils.rm_rf(@directory) if @directory
          @directory = nil
        end

        private

        def answer(server, index)
          loop do
            client = server.accept
            client.write("\n######## worker #{index}\n#{Backtraces.render}")
          rescue SystemCallError, IOError
            nil
          ensure
            client&.close
          end
        end

        def ask(pid)
          socket = UNIXSocket.new(File.join(@directory.to_s, "#{pid}.sock"))
          read(socket, Clock.now + TIMEOUT)
        rescue SystemCallError, IOError => e
          "\n######## worker pid #{pid}: no answer (#{e.message})\n"
        ensure
          socket&.close
        end

        def read(socket, deadline)
          report = +""
          while (left = deadline - Clock.now).positive? && socket.wait_readable(left)
            chunk = socket.read_nonblock(65_536, exception: false) or return report
            report << chunk.force_encoding(Encoding::UTF_8) if chunk.is_a?(String)
          end
          "#{report}\n(no more within #{TIMEOUT} s)\n"
        end
      end
    end
  end
end
