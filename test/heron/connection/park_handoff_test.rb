# frozen_string_literal: true

require "test_helper"

# A connection that parks gives up its socket: another worker may resume it before the parking
# call has even returned, and the parking fiber must then leave the socket alone. The real
# Server::ParkingLot no longer switches fibers inside #park (ParkingLotTest), so the parking here
# makes the interleaving happen every time: its #park serves the connection in another fiber and
# returns only once that fiber has answered the request. Before the fix the parking fiber, back
# from #park, saw its parked state cleared by the resume and closed the socket, so the client's
# next request on the kept-alive connection found it closed.
class ConnectionParkHandoffTest < Minitest::Test
  APP = ->(env) { [200, { "content-type" => "text/plain" }, [env["PATH_INFO"]]] }

  # A real Server::Parking, started, whose #park resumes the connection at once in a task of its
  # own (instead of handing its socket to its ParkingLot) and returns once it has been answered.
  class ResumingParking < Heron::Server::Parking
    attr_reader :parks

    def initialize(config, listener)
      super
      @parks = 0
      @answered = listener.answered
    end

    def spot(connection, socket, accepted_at)
      Spot.new(self, connection, socket, accepted_at, parkable: true)
    end

    def park(spot, _io, _deadline, _lane)
      @parks += 1
      return unless @parks == 1
      Async do
        spot.io.wait_readable
        spot.resume
      end
      @answered.wait # the other worker has served the request: only now does #park return
    end
  end

  # The listener interface of Heron::Connection (see Connection#initialize).
  class Listener
    attr_reader :answered, :parking, :exchange

    def initialize(context)
      @answered = Async::Notification.new
      @parking = ResumingParking.new(context.config, self)
      @exchange = Heron::Exchange.new(context, self)
    end

    def draining? = false
    def admit(_request) = nil
    def closed(_connection) = nil

    def finished(_request)
      @answered.signal
      nil
    end
  end

  def test_a_connection_resumed_before_park_returns_keeps_serving_it
    config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], log_io: StringIO.new, error_io: StringIO.new)
    context = Heron::Server::Context.new(Heron::Server.new(Rack::Lint.new(APP), config))
    server = TCPServer.new("127.0.0.1", 0)
    client = TCPSocket.new("127.0.0.1", server.addr[1])
    listener = Listener.new(context)
    responses = []
    Sync do |task|
      listener.parking.start(task, Heron::Server::ConnectionWorkers.new(task)) # its hot waits' watcher
      connection = Heron::Connection.new(server.accept, context, listener, Process.clock_gettime(Process::CLOCK_MONOTONIC))
      Async do
        sleep 0.05 # after the connection has looked for its first bytes and parked
        client.write("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
        responses << read_response(client)
        client.write("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
        responses << read_response(client)
        client.close
      end
      assert_equal :parked, connection.serve, "nothing had come when it was served: it parked"
    end
    assert_equal [[200, "/first"], [200, "/second"]], responses.map { |r| r&.values_at(0, 2) }
    assert_equal 1, listener.parking.parks
  ensure
    server&.close
  end
end
