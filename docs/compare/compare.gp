# tprimat compare: six panels from compare_bars.dat and compare_series_*.dat,
# their names and titles from compare_labels.dat.
# Restyle freely, then: gnuplot -e 'fmt="png"' compare.gp (or fmt="svg").
if (!exists("fmt")) fmt = "png"
if (fmt eq "svg") {
  set terminal svg size 1800,1000 dynamic font "sans,10"
  set output "compare.svg"
} else {
  set terminal pngcairo size 1800,1000 font "sans,10"
  set output "compare.png"
}
set termoption noenhanced  # names hold underscores, not subscripts
# Every name, title and key comes from the data: read, never parsed as script.
title_text = ""
stats "compare_labels.dat" index 0 using (title_text = title_text . ($1 > 1 ? "\n" : "") . strcol(2), 0) nooutput
array bar_tick[2]
do for [i=1:2] { bar_tick[i] = "" }
stats "compare_labels.dat" index 1 using (bar_tick[int($1)] = bar_tick[int($1)] . ($2 > 1 ? "\n" : "") . strcol(3), 0) nooutput
array series_title[2]
do for [i=1:2] { series_title[i] = "" }
stats "compare_labels.dat" index 2 using (series_title[int($1)] = series_title[int($1)] . ($2 > 1 ? "\n" : "") . strcol(3), 0) nooutput
set datafile missing "NaN"
set grid ytics
bar_value(v) = abs(v) >= 1000 ? sprintf("%.0f", v) : sprintf("%.3g", v)
set multiplot layout 2,3 title title_text font ",11"
set style fill solid 0.8 border -1
set bmargin 3
set xrange [-0.5:1.5]
set xtics () norotate font ",9"
do for [i=1:2] { set xtics add (bar_tick[i] i-1) }
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0  # room for the tallest bar's value
set title "Per-GPU throughput (TFLOP/s/GPU)"
plot "compare_bars.dat" using 1:3:(0.6):5 with boxes lc rgb variable notitle, \
     "" using 1:3:(bar_value($3) . ($6 > 0 ? " (!)" : "")) with labels offset 0,0.7 font ",9" notitle
unset label
set title "Peak memory per GPU (GiB)"
plot "compare_bars.dat" using 1:4:(0.6):5 with boxes lc rgb variable notitle, \
     "" using 1:4:(bar_value($4) . ($6 > 0 ? " (!)" : "")) with labels offset 0,0.7 font ",9" notitle
unset label
set autoscale x
set xtics 1 font ",10"  # whole steps
set autoscale y
set key top right opaque font ",8"
set xlabel "measured step"
set offsets 0, 0, graph 0.45, graph 0.05
set yrange [0<*:*]
set title "Training loss"
plot "compare_series_1.dat" using 1:2 with linespoints pt 7 ps 0.5 title series_title[1], \
     "compare_series_2.dat" using 1:2 with linespoints pt 7 ps 0.5 title series_title[2]
set bmargin  # the second row: automatic again
set offsets 0, 0, graph 0.45, graph 0.05
set yrange [0<*:*]
set title "Learning rate"
plot "compare_series_1.dat" using 1:3 with linespoints pt 7 ps 0.5 title series_title[1], \
     "compare_series_2.dat" using 1:3 with linespoints pt 7 ps 0.5 title series_title[2]
set offsets 0, 0, graph 0.45, graph 0.05
set yrange [0<*:*]
set title "Memory per GPU (GiB)"
plot "compare_series_1.dat" using 1:4 with linespoints pt 7 ps 0.5 title series_title[1], \
     "compare_series_2.dat" using 1:4 with linespoints pt 7 ps 0.5 title series_title[2]
set offsets 0, 0, graph 0.45, graph 0.05
set yrange [0<*:*]
set title "Step time (s)"
plot "compare_series_1.dat" using 1:5 with linespoints pt 7 ps 0.5 title series_title[1], \
     "compare_series_2.dat" using 1:5 with linespoints pt 7 ps 0.5 title series_title[2]
unset multiplot
