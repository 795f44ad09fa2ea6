# frozen_string_literal: true

module Heron
  module Profiler
    # An unknown profiler option or an invalid value for one (see {Options.keywords}).
    class OptionError < ArgumentError
    end
  end
end
