# frozen_string_literal: true

require "optparse"

module Bench
  # Options several scripts take, spelled and checked the same way in each.
  module Options
    module_function

    # `--rates LIST`: offered rates, requests per second, comma-separated whole numbers.
    # @param parser [OptionParser]
    # @param default [Array<Integer>] shown in the help.
    # @yieldparam rates [Array<Integer>]
    # @return [void]
    def rates(parser, default, &block)
      parser.on("--rates LIST", Array, "offered rates per second (default #{default.join(',')})") do |list|
        block.call(list.map { |rate| Integer(rate) })
      end
    end

    # `--only LIST`: which servers (or variants) to run, comma-separated.
    # @yieldparam names [Array<String>]
    # @return [void]
    def only(parser, known, &block) = parser.on("--only LIST", Array, "among #{known.join(',')}", &block)

    # `--out FILE`: where the markdown report goes (its page in bench/results/ by default).
    # @yieldparam path [String]
    # @return [void]
    def out(parser, &block) = parser.on("--out FILE", "markdown report (default its page in bench/results/)", &block)
  end
end
