# frozen_string_literal: true

require "test_helper"
require "heron/control"

# A single process's control state says ready from the moment its server accepts: a request that
# waited in the listen queue while the server started is answered with the state already
# "ready". It used to be marked ready by a thread the server woke, which on a busy machine ran
# after the first requests were served (control_test.rb's /stats then read "booting" with
# requests_served 3, 1 run in 34 under stress-ng).
class ControlSingleReadyTest < Minitest::Test
  include ServerHelper

  def test_the_first_request_served_finds_the_process_ready
    config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], control_bind: "tcp://127.0.0.1:0",
                                      log_io: StringIO.new, error_io: StringIO.new)
    logger = Heron::Log::Logger.new(config)
    handle = Heron::Control.for_single(config, logger, nil)
    server = Heron::Server.new(->(_env) { [200, {}, [handle.state.status]] }, config, logger: logger).bind
    Heron::Control.attach_server(handle, server)
    socket = connect(server.bound_ports.first) # in the listen queue before the server runs
    socket.write("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
    runner = Thread.new { server.run }
    status, _headers, body = read_response(socket)
    assert_equal [200, "ready"], [status, body]
  ensure
    socket&.close
    server&.stop
    runner&.join(ProcessHelper::PATIENCE)
    handle&.close
  end
end
