# frozen_string_literal: true

require "json"
require "socket"

module Heron
  module Profiler
    class Peers
      # One worker's side of {Peers}: a thread answering, one connection at a time, two
      # questions about its {Store} on a unix socket:
      #
      #   find ID\n      the record (from the ring or a route's slowest) as JSON, or `null`
      #   recent N\n     up to N (at most the store's capacity) recent records, without queries
      #   routes\n       the per-route figures ({RouteStats#export})
      #
      # Questions longer than {MAX_QUESTION} bytes, or not sent within {Peers::TIMEOUT} seconds,
      # are answered `null`. The socket is removed when the process exits.
      class Listener
        MAX_QUESTION = 256

        # @return [Integer] the process the listener runs in.
        attr_reader :pid

        # @param path [String] the socket's path.
        # @param records [Records, Store] what to answer from (a Store has no routes).
        def initialize(path, records)
          @path = path
          @records = records
        end

        # Binds the socket (replacing a stale one of a dead process with this pid) and starts
        # the answering thread.
        # @return [self]
        def start
          File.delete(@path) if File.socket?(@path)
          @server = UNIXServer.new(@path)
          @pid = Process.pid
          @thread = Thread.new { run }
          at_exit { stop if Process.pid == @pid }
          self
        end

        # Stops answering and removes the socket (and its directory once it is empty).
        # @return [void]
        def stop
          @thread&.kill
          @server&.close
          File.delete(@path)
          Dir.rmdir(File.dirname(@path))
        rescue SystemCallError, IOError
          nil
        end

        # @param question [String] one question line.
        # @return [String] its JSON answer.
        def answer(question)
          verb, argument = question.to_s.strip.split(" ", 2)
          case verb
          when "find" then JSON.generate(@records.find(argument.to_s))
          when "routes" then JSON.generate(@records.respond_to?(:export_routes) ? @records.export_routes : [])
          when "recent" then JSON.generate(recent(argument.to_i))
          else "null"
          end
        end

        private

        def run
          loop do
            client = @server.accept
            serve(client)
          end
        rescue IOError, SystemCallError
          nil
        end

        def serve(client)
          question = read_question(client)
          client.write(answer(question))
        rescue SystemCallError, IOError, JSON::GeneratorError
          nil
        ensure
          client.close
        end

        def read_question(client)
          return nil unless client.wait_readable(TIMEOUT)
          client.gets("\n", MAX_QUESTION)
        end

        def recent(limit)
          limit = limit.clamp(1, Store::DEFAULT_SIZE)
          @records.recent(limit).map { |record| record.except(:queries) }
        end
      end
    end
  end
end
