# frozen_string_literal: true

module Bench
  # Where two builds' or variants' instructions differ, function by function: each side is a
  # callgrind profile of a run with N requests and one of a run with none (what
  # {CallgrindServer#per_request} leaves behind), read with `callgrind_annotate`, so a row is the
  # instructions per request one side spends in a function more than the other. Functions of
  # libruby without symbols show as addresses (`0x1bebc0`), the same in both runs of one binary.
  #
  #   diff = Bench::CallgrindDiff.new({ run: "on.60", zero: "on.0" }, { run: "off.60", zero: "off.0" }, 60)
  #   diff.top(20)                   # [[function, added per request, base per request], ...]
  #   diff.top(20, inclusive: true)
  class CallgrindDiff
    LINE = /\A\s*([\d,]+) \([\s\d.]+%\)\s+(.+?)\s*\z/

    # @param side [Hash] :run and :zero, the profiles of the measured side.
    # @param base [Hash] :run and :zero, the profiles it is compared with.
    # @param requests [Integer] requests in each :run (beyond its warm-up).
    def initialize(side, base, requests)
      @side = side
      @base = base
      @requests = requests
    end

    # @param count [Integer] rows to return.
    # @param inclusive [Boolean] whether a function's callees count as its own.
    # @return [Array<Array(String, Integer, Integer)>] function, instructions per request added
    #   (negative: saved) and the base's own per request, the largest differences first.
    def top(count, inclusive: false)
      side = per_request(@side, inclusive)
      base = per_request(@base, inclusive)
      rows = (side.keys | base.keys).map { |name| [name, side[name] - base[name], base[name]] }
      rows.max_by(count) { |_, added, _| added.abs }
    end

    private

    def per_request(profiles, inclusive)
      run = functions(profiles.fetch(:run), inclusive)
      zero = functions(profiles.fetch(:zero), inclusive)
      run.each_with_object(Hash.new(0)) { |(name, count), table| table[name] = (count - zero[name]) / @requests }
    end

    # Instructions per function, named by file (without its directory) and function. Recursion
    # levels (`'2`) and a file seen under two paths are one function: exclusive counts add up,
    # inclusive ones (each level's includes the next) keep the largest.
    def functions(profile, inclusive)
      text = IO.popen(["callgrind_annotate", "--auto=no", "--threshold=100", "--inclusive=#{inclusive ? 'yes' : 'no'}", profile],
                      err: File::NULL, &:read)
      text.each_line.with_object(Hash.new(0)) do |line, table|
        count, name = line.match(LINE)&.captures
        next if name.nil? || name == "PROGRAM TOTALS"
        name = name.sub(/ \[.*\]\z/, "").sub(/'\d+\z/, "").sub(%r{\A[^:]*/}, "")
        count = count.delete(",").to_i
        table[name] = inclusive ? [table[name], count].max : table[name] + count
      end
    end
  end
end
