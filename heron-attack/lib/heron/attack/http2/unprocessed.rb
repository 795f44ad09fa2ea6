# frozen_string_literal: true

module Heron
  module Attack
    module HTTP2
      # A request the server did not process: its stream was above the last stream id of the
      # server's GOAWAY, or refused (REFUSED_STREAM). RFC 9113 section 8.7 lets a client send it
      # again, which {Client} does on another connection. An EOFError, so one that is never
      # sent again counts as "reset".
      class Unprocessed < EOFError; end
    end
  end
end
